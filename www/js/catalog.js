// The scenario catalog: one listbox of every scenario, grouped by pattern,
// with a roving tab stop (the arrow keys move, Home and End jump, Enter or
// Space opens). It owns #catalog; the page gives it the entries and the
// scenario shown, and hears which one is opened.
import { el } from './parts/dom.js';

const ui = { catalog: /** @type {HTMLElement} */ (document.getElementById('catalog')) };

// Draws the catalog's `entries`, grouped by pattern; the one whose id is
// `current` is selected (and the tab stop).
export function render(entries, current) {
  const groups = [
    ['idempotency', 'Idempotency keys', 'A client sends a key with each request; the server stores a receipt per key, so retries and racing duplicates get the first result instead of a second effect.'],
    ['outbox', 'Transactional outbox', 'The producer writes its change and the event announcing it in one transaction; a relay delivers events until they are marked sent, so none is lost, but some arrive twice.'],
    ['inbox', 'Idempotent inbox', 'Each consumer records the ids of events it applied in the same transaction as their effects, so a redelivered event is skipped, as long as that history is kept.'],
  ];
  // One listbox, one tab stop: the current scenario has tabindex 0, the
  // arrow keys move between options (a roving tabindex), Enter opens one.
  const hadFocus = ui.catalog.contains(document.activeElement);
  ui.catalog.setAttribute('role', 'listbox');
  ui.catalog.setAttribute('aria-label', 'Scenarios');
  ui.catalog.replaceChildren(...groups.map(([pattern, name, blurb]) => {
    // A listbox owns only groups and options: the visible heading and blurb
    // are hidden from assistive technology, which gets them as the group's
    // name and description instead.
    const section = el('div', '', 'catalog-group');
    section.setAttribute('role', 'group');
    section.setAttribute('aria-label', name);
    const heading = el('h3', name);
    heading.setAttribute('aria-hidden', 'true');
    const about = el('p', blurb, 'pattern-blurb');
    about.id = `catalog-${pattern}-about`;
    about.setAttribute('aria-hidden', 'true');
    section.setAttribute('aria-describedby', about.id);
    section.append(heading, about);
    const list = el('ul');
    list.setAttribute('role', 'presentation');
    for (const entry of entries.filter((e) => e.pattern === pattern)) {
      const option = el('li', '', 'scenario');
      option.setAttribute('role', 'option');
      option.dataset.action = 'pick';
      option.dataset.scenario = entry.id;
      option.append(el('span', entry.title, 'scenario-title'));
      option.append(el('span', entry.fails ? 'fails' : 'holds', entry.fails ? 'tag tag-fails' : 'tag tag-holds'));
      if (entry.reference) option.append(el('span', 'reference', 'tag'));
      const selected = entry.id === current;
      option.setAttribute('aria-selected', String(selected));
      option.tabIndex = selected ? 0 : -1;
      list.append(option);
    }
    section.append(list);
    return section;
  }));
  if (hadFocus) /** @type {HTMLElement | null} */ (ui.catalog.querySelector('[role="option"][tabindex="0"]'))?.focus();
}

// Calls `listener(option)` when Enter or Space opens a scenario.
export function onPick(listener) {
  picked = listener;
}
let picked = null;

// The catalog's keys: arrows move, Home and End jump, Enter or Space opens.
ui.catalog.addEventListener('keydown', (event) => {
  const options = /** @type {HTMLElement[]} */ ([...ui.catalog.querySelectorAll('[role="option"]')]);
  const at = options.indexOf(/** @type {HTMLElement} */ (document.activeElement));
  if (at < 0) return;
  const move = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
  let next = null;
  if (move) next = options[Math.max(0, Math.min(options.length - 1, at + move))];
  else if (event.key === 'Home') next = options[0];
  else if (event.key === 'End') next = options[options.length - 1];
  else if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    picked?.(options[at]);
    return;
  } else return;
  event.preventDefault();
  for (const option of options) option.tabIndex = option === next ? 0 : -1;
  next.focus();
});
