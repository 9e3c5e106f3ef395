// The timeline: one lane per attempt, each step a box in time order, lane
// heads with the attempt's status and lock after the selected step; the step
// where the power went out has a badge and the rows it took. Used by
// the page and the embeds; clicks reach the host through data-action
// attributes ("step" with data-attempt, "select" with data-step).
import { el } from './dom.js';
import { lostCount, lostSentence, powerLossBadge } from './power.js';
import { FAILURE_WORDS, locksAt, resultText, statusAt, walBadges } from './words.js';

// The CSS classes of a step box.
function stepClasses(step, selected) {
  const classes = ['step'];
  const progress = step.progress.kind;
  if (progress === 'blocked') classes.push('blocked');
  if (progress === 'failed') classes.push('failed');
  if (progress === 'finished') {
    classes.push('finished');
    const { ending, kind } = step.progress.outcome;
    if (ending === 'crashed') classes.push('crash');
    else if (ending === 'replyLost') classes.push('lost');
    else if (FAILURE_WORDS.includes(kind)) classes.push('failed');
  }
  // The power went out here: the whole machine's, not one attempt's end.
  if (step.powerLoss) classes.push('power-loss');
  if (step.index === selected) classes.push('selected');
  return classes.join(' ');
}

// The box drawn for each step of each container's views: a step of a view
// put together from changes is the same object as in the view before
// (parts/changes.js), so a step adds one box and moves none, however long
// the run.
const drawnBoxes = new WeakMap();

// A step's box (its class is set by the caller).
function stepBox(step) {
  const box = el('button', '', 'step');
  box.type = 'button';
  box.dataset.action = 'select';
  box.dataset.step = String(step.index);
  box.style.gridColumn = String(step.attempt + 1);
  box.style.gridRow = String(step.index + 2);
  // A power loss says so first, in words (its name is the scenario's own).
  if (step.powerLoss) box.append(powerLossBadge());
  box.append(el('span', `${step.index + 1}. ${step.name}`, 'step-name'));
  if (step.sql) box.append(el('code', step.sql, 'step-sql'));
  const result = resultText(step.result);
  if (result) box.append(el('span', result, 'step-result'));
  if (step.progress.kind === 'finished') box.append(el('span', step.progress.outcome.kind, 'step-outcome'));
  box.append(el('span', step.note, 'step-note'));
  // Which committed rows it destroyed, as text (their values are the
  // scenario's, and may be anyone's); losing none is no alarm.
  if (step.powerLoss) box.append(el('span', lostSentence(step), lostCount(step) ? 'step-lost' : 'step-lost lost-none'));
  return box;
}

// Makes `container`'s children `nodes`, in order, moving only what differs:
// the nodes that are not wanted go first, then each wanted one that is not
// in its place is put there.
function reconcile(container, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...container.children]) {
    if (!wanted.has(child)) child.remove();
  }
  nodes.forEach((node, i) => {
    const there = container.children[i];
    if (there !== node) container.insertBefore(node, there ?? null);
  });
}

// Fills `container` (a grid) with the lanes of `view`; options:
// { selected, busy, stepButtons }. Returns the selected step's box.
export function renderTimeline(container, view, { selected = -1, busy = false, stepButtons = true } = {}) {
  const { labels, runnable, trace } = view;
  const locks = locksAt(view, selected);
  // The lanes show the attempts after the selected step; the Step buttons
  // act at the run's end. When those differ, each lane says which it shows.
  const last = trace.length - 1;
  const earlier = selected >= 0 && selected < last;
  if (container.style.getPropertyValue('--lanes') !== String(labels.length)) {
    container.style.setProperty('--lanes', String(labels.length));
    fitLanes(container);
    // Observed once: observing again restarts the observation, and its
    // callback would then run after every drawing.
    fitting.observe(container);
  }
  const nodes = [];
  labels.forEach((label, i) => {
    const head = el('div', '', 'lane-head');
    head.style.gridColumn = String(i + 1);
    head.append(el('span', label, 'lane-label'));
    if (stepButtons) {
      const button = el('button', `Step ${label}`, 'step-button');
      button.type = 'button';
      button.dataset.action = 'step';
      button.dataset.attempt = String(i);
      button.disabled = busy || !runnable.includes(i);
      const where = earlier ? ` at the run's end (step ${last + 1})` : '';
      button.title = runnable.includes(i)
        ? `Let ${label} take its next step${where} (${(view.letters?.[i] ?? String.fromCharCode(65 + i)).toLowerCase()})`
        : `${label} cannot step${where || ' now'}: ${view.statuses[i].kind === 'blocked' ? 'it waits for a lock' : 'it is done or waits'}`;
      head.append(button);
    }
    const status = statusAt(view, i, selected);
    const text = earlier ? `after step ${selected + 1}: ${status.text}` : status.text;
    const statusText = el('span', text, `lane-status status-${status.kind}`);
    statusText.title = text;
    head.append(statusText);
    const level = locks[i]?.level ?? 'NONE';
    head.append(el('span', level, `lock lock-${level.toLowerCase()}`));
    for (const badge of walBadges(locks[i] ?? {})) {
      const span = el('span', badge.text, 'lock lock-wal');
      span.title = badge.title;
      head.append(span);
    }
    nodes.push(head);
  });
  let boxes = drawnBoxes.get(container);
  if (!boxes) {
    boxes = new WeakMap();
    drawnBoxes.set(container, boxes);
  }
  let selectedBox = null;
  for (const step of trace) {
    let box = boxes.get(step);
    if (!box) {
      box = stepBox(step);
      boxes.set(step, box);
    }
    const classes = stepClasses(step, selected);
    if (box.className !== classes) box.className = classes;
    if (step.index === selected) selectedBox = box;
    nodes.push(box);
  }
  reconcile(container, nodes);
  return selectedBox;
}

// Whole lanes only: as many lanes as fit at their least width (the CSS's
// --lane-min, in rem) share the timeline's width, as --fit; the others wait
// to the right, so that no lane, nor its Step button, is cut at the edge.
// What is measured is read when the box is laid out anyway (a resize
// observer's callback), never during a drawing, which would force a layout.
/** @type {WeakMap<Element, { width: number, least: number, gap: number }>} */
const measured = new WeakMap();
const fitting = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const container = /** @type {HTMLElement} */ (entry.target);
    const style = getComputedStyle(container);
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
    measured.set(container, {
      width: entry.contentRect.width,
      least: Number(style.getPropertyValue('--lane-min')) * rem,
      gap: parseFloat(style.columnGap) || 0,
    });
    fitLanes(container);
  }
});
function fitLanes(container) {
  const box = measured.get(container);
  if (!box?.least) return;
  const { width, least, gap } = box;
  const lanes = Number(container.style.getPropertyValue('--lanes')) || 1;
  const fit = Math.max(1, Math.min(lanes, Math.floor((width + gap) / (least + gap))));
  if (container.style.getPropertyValue('--fit') !== String(fit)) container.style.setProperty('--fit', String(fit));
  container.style.setProperty('--spill', fit < lanes ? '1' : '0');
  container.toggleAttribute('data-spill', fit < lanes);
}

// Scrolls the timeline's own box so that `box`, the selected step, is in
// view below the sticky lane heads; with `page`, then the window so that
// the whole timeline is (its heads, the step and its horizontal scrollbar).
export function keepInView(box, { page = false } = {}) {
  const scroller = box?.closest('.lanes-wrap, .scroll');
  if (!scroller) return;
  const b = box.getBoundingClientRect();
  const s = scroller.getBoundingClientRect();
  const heads = scroller.querySelector('.lane-head')?.offsetHeight ?? 0;
  const margin = 6;
  if (b.top < s.top + heads) scroller.scrollTop -= s.top + heads - b.top + margin;
  else if (b.bottom > s.bottom) scroller.scrollTop += b.bottom - s.bottom + margin;
  // Sideways, whole lanes: the step's lane becomes the first lane shown
  // (it was to the left) or the last (to the right).
  const lanes = /** @type {HTMLElement} */ (box.parentElement);
  const fit = Number(lanes.style.getPropertyValue('--fit'));
  const lane = measured.get(lanes);
  const edge = s.left + scroller.clientLeft;
  if (lane && fit) {
    const pad = (scroller.clientWidth - lane.width) / 2;
    if (b.left < edge + pad - 1) scroller.scrollLeft += b.left - edge - pad;
    else if (b.right > edge + scroller.clientWidth + 1) scroller.scrollLeft += b.left - edge - pad - (fit - 1) * (b.width + lane.gap);
  } else if (b.left < s.left) {
    scroller.scrollLeft -= s.left - b.left + margin;
  } else if (b.right > s.right) {
    scroller.scrollLeft += b.right - s.right + margin;
  }
  if (!page) return;
  if (s.top < 0) window.scrollBy({ top: s.top - margin, behavior: 'instant' });
  else if (s.bottom > window.innerHeight) window.scrollBy({ top: Math.min(s.bottom - window.innerHeight + margin, s.top - margin), behavior: 'instant' });
}
