// <replayground-scenario>: a live, steppable scenario for any page.
//
//   <script type="module" src="https://HOST/js/embed.js"></script>
//   <replayground-scenario scenario="idem-check-then-write" schedule="A6B3AB4"></replayground-scenario>
//
// Attributes (all optional but `scenario`):
//   scenario   a catalog id                                   (required)
//   schedule   the interleaving to play, e.g. A6B3AB4         (default: lowest runnable attempt first)
//   params     the scenario's parameters as JSON              (default: the scenario's own)
//   controls   which buttons to show: any of "step run reset" (default: "step run reset")
//   step       how many steps to show at first               (default: 0)
//   theme      "light", "dark" or "auto"                       (default: "auto")
//
// Styling is isolated in a shadow root; hosts theme it with --rg-accent,
// --rg-bg, --rg-fg, --rg-muted, --rg-line, --rg-font and --rg-radius. Every
// embed on a page shares one engine (one Web Worker, one wasm instance) and
// runs its own stepper. A wrong attribute shows its message in the embed.
import * as engine from './engine.js';

const STYLESHEET = new URL('../css/embed.css', import.meta.url).href;
const CONTROLS = ['step', 'run', 'reset'];
let catalog = null;

// The catalog, fetched once for all embeds.
function loadCatalog() {
  catalog ??= engine.scenarios();
  return catalog;
}

// Decodes a schedule string (A3B2A) into attempt indices; throws on bad text.
export function decodeSchedule(text) {
  const steps = [];
  const pattern = /([A-Z])(\d*)/gy;
  let match;
  let at = 0;
  while (at < text.length) {
    pattern.lastIndex = at;
    match = pattern.exec(text);
    if (!match) throw new Error(`invalid schedule: unexpected ${JSON.stringify(text[at])} at position ${at}`);
    const count = match[2] === '' ? 1 : Number(match[2]);
    if (!Number.isInteger(count) || count < 1 || count > 100000 || steps.length + count > 100000) {
      throw new Error('invalid schedule: a repeat count must be 1 to 100000');
    }
    for (let i = 0; i < count; i += 1) steps.push(match[1].charCodeAt(0) - 65);
    at = pattern.lastIndex;
  }
  return steps;
}

// Creates an element with text content and optional class.
function el(tag, text = '', className = '') {
  const node = document.createElement(tag);
  if (text !== '') node.textContent = text;
  if (className) node.className = className;
  return node;
}

class ReplaygroundScenario extends HTMLElement {
  static get observedAttributes() {
    return ['scenario', 'schedule', 'params', 'controls', 'step', 'theme'];
  }

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = STYLESHEET;
    this.frame = el('div', '', 'frame');
    this.root.append(link, this.frame);
    this.stepper = null;
    this.view = null;
    this.plan = [];
    this.selected = -1;
    this.generation = 0;
  }

  connectedCallback() {
    this.load();
  }

  disconnectedCallback() {
    this.stepper?.close();
    this.stepper = null;
  }

  attributeChangedCallback(_name, oldValue, newValue) {
    if (this.isConnected && oldValue !== newValue) this.load();
  }

  // Shows a message instead of the player.
  fail(message) {
    this.frame.dataset.state = 'error';
    this.frame.replaceChildren(el('p', `replayground: ${message}`, 'message'));
  }

  // Reads the attributes, creates the stepper, and draws the player.
  async load() {
    const generation = ++this.generation;
    this.frame.dataset.theme = this.getAttribute('theme') ?? 'auto';
    this.frame.dataset.state = 'loading';
    this.frame.replaceChildren(el('p', 'Loading SQLite…', 'message'));
    try {
      const id = this.getAttribute('scenario');
      if (!id) throw new Error('the scenario attribute is required, e.g. scenario="idem-race"');
      const entries = await loadCatalog();
      const entry = entries.find((e) => e.id === id);
      if (!entry) throw new Error(`unknown scenario ${JSON.stringify(id)}; known: ${entries.map((e) => e.id).join(', ')}`);
      let params = {};
      if (this.hasAttribute('params')) {
        try {
          params = JSON.parse(this.getAttribute('params'));
        } catch {
          throw new Error('the params attribute must be JSON, e.g. params=\'{"attempts":2}\'');
        }
      }
      const controls = (this.getAttribute('controls') ?? CONTROLS.join(' ')).split(/\s+/).filter(Boolean);
      const unknown = controls.filter((c) => !CONTROLS.includes(c));
      if (unknown.length) throw new Error(`unknown control ${JSON.stringify(unknown[0])}; use step, run and reset`);
      this.plan = decodeSchedule(this.getAttribute('schedule') ?? '');
      const initial = this.hasAttribute('step') ? Number(this.getAttribute('step')) : 0;
      if (!Number.isInteger(initial) || initial < 0) throw new Error('the step attribute must be a whole number');
      const stepper = await engine.stepper(id, { params });
      if (generation !== this.generation) {
        stepper.close();
        return;
      }
      this.stepper?.close();
      this.stepper = stepper;
      this.entry = entry;
      this.controls = controls;
      this.view = stepper.state;
      if (initial > 0) await this.advance(initial);
      this.selected = this.view.trace.length - 1;
      this.frame.dataset.state = 'ready';
      this.render();
    } catch (error) {
      if (generation === this.generation) this.fail(error.message);
    }
  }

  // The attempt that takes the next step: the schedule's, or the lowest runnable.
  next() {
    const done = this.view.trace.length;
    if (done < this.plan.length) return this.plan[done];
    return this.view.runnable[0];
  }

  // Takes up to `count` steps.
  async advance(count) {
    for (let i = 0; i < count; i += 1) {
      const attempt = this.next();
      if (attempt === undefined || !this.view.runnable.includes(attempt)) {
        if (attempt !== undefined && this.view.trace.length < this.plan.length) {
          throw new Error(`the schedule does not fit: step ${this.view.trace.length + 1} names an attempt that cannot run`);
        }
        return;
      }
      this.view = await this.stepper.step(attempt);
    }
  }

  // Runs a control's action and redraws.
  async act(action) {
    try {
      if (action === 'step') await this.advance(1);
      if (action === 'run') await this.advance(10000);
      if (action === 'reset') this.view = await this.stepper.setSchedule('');
      this.selected = this.view.trace.length - 1;
      this.render();
    } catch (error) {
      this.fail(error.message);
    }
  }

  // Draws the player: title, controls, lanes, tables of the selected step, verdict.
  render() {
    const { labels, trace, result, statuses } = this.view;
    const head = el('div', '', 'head');
    head.append(el('strong', this.entry.title, 'title'));
    // The parameters this embed runs with, where they differ from the scenario's defaults.
    const changed = this.entry.params
      .filter((p) => this.view.params?.[p.name] !== undefined && this.view.params[p.name] !== p.default)
      .map((p) => `${p.name} ${this.view.params[p.name]}`);
    if (changed.length) head.append(el('small', changed.join(' · '), 'params'));
    const buttons = el('div', '', 'controls');
    for (const action of this.controls) {
      const button = el('button', { step: 'Step ▶', run: 'Run ⏭', reset: 'Reset ⏮' }[action]);
      button.type = 'button';
      button.dataset.action = action;
      button.disabled = action === 'reset' ? trace.length === 0 : Boolean(result);
      button.addEventListener('click', () => this.act(action));
      buttons.append(button);
    }
    head.append(buttons);

    const lanes = el('div', '', 'lanes');
    lanes.style.setProperty('--lanes', String(labels.length));
    labels.forEach((label, i) => {
      const lane = el('div', '', 'lane-head');
      lane.style.gridColumn = String(i + 1);
      const status = statuses[i];
      const word = status.kind === 'finished' ? status.outcome.kind : status.kind;
      const level = trace[this.selected]?.locks[i]?.level ?? 'NONE';
      lane.append(el('span', label, 'label'), el('span', word, 'word'), el('span', level, `lock lock-${level.toLowerCase()}`));
      lanes.append(lane);
    });
    for (const step of trace) {
      const box = el('button', '', 'step');
      box.type = 'button';
      if (step.progress.kind === 'blocked') box.classList.add('blocked');
      if (step.progress.kind === 'finished') box.classList.add('finished');
      if (step.name.startsWith('crash')) box.classList.add('crash');
      if (step.index === this.selected) box.classList.add('selected');
      box.style.gridColumn = String(step.attempt + 1);
      box.style.gridRow = String(step.index + 2);
      box.append(el('span', `${step.index + 1}. ${step.name}`, 'name'));
      if (step.sql) box.append(el('code', step.sql));
      box.append(el('span', step.note, 'note'));
      box.addEventListener('click', () => {
        this.selected = step.index;
        this.render();
      });
      lanes.append(box);
    }
    const scroller = el('div', '', 'scroll');
    scroller.append(lanes);

    const tables = el('div', '', 'tables');
    const committed = trace[this.selected]?.tables ?? this.view.initialTables;
    for (const [db, byTable] of Object.entries(committed ?? {})) {
      for (const [name, content] of Object.entries(byTable)) {
        const table = el('table');
        table.append(el('caption', `${db} · ${name} (${content.rows.length})`));
        const header = el('tr');
        for (const column of content.columns) header.append(el('th', column));
        table.append(header);
        for (const values of content.rows) {
          const tr = el('tr');
          for (const v of values) tr.append(el('td', v === null ? 'NULL' : String(v)));
          table.append(tr);
        }
        tables.append(table);
      }
    }

    const verdict = el('p', '', 'verdict');
    if (result) {
      const failed = result.checks.filter((c) => !c.pass);
      verdict.textContent = failed.length
        ? `Fails: ${failed.map((c) => `${c.name}: expected ${c.expected}, got ${c.actual}`).join('; ')}`
        : `Every check passes (${result.checks.length}).`;
      verdict.dataset.kind = failed.length ? 'fail' : 'pass';
    } else {
      verdict.textContent = `${trace.length} steps taken.`;
    }
    this.frame.replaceChildren(head, scroller, tables, verdict);
  }
}

if (!customElements.get('replayground-scenario')) {
  customElements.define('replayground-scenario', ReplaygroundScenario);
}
