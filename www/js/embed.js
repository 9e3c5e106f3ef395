// <replayground-scenario>: a live, steppable scenario for any page.
//
//   <script type="module" src="https://HOST/js/embed.js"></script>
//   <replayground-scenario scenario="idem-check-then-write" schedule="A6B3AB4"></replayground-scenario>
//
// The scenario is one of (exactly one):
//   scenario   a catalog id
//   src        the URL of a scenario file on the same origin, e.g. src="my-design.toml"
//   source     a scenario file packed (deflate-raw, base64url), as embed.html takes it
//   or a child <script type="application/toml">…</script> holding the file
// A scenario file is untrusted: it runs in the engine's worker within the
// format's bounds, and all its text is shown as text.
//
// Other attributes (all optional):
//   schedule   the interleaving to play, e.g. A6B3AB4         (default: the shortest counterexample of a
//                                                             design that fails, else a round-robin run)
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
import { el, iconButton } from './parts/dom.js';
import { databaseSections } from './parts/tables.js';
import { keepInView, renderTimeline } from './parts/timeline.js';
import { MAX_SOURCE_BYTES, pack, unpack } from './parts/pack.js';
import { verdictOf } from './parts/verdict.js';

const STYLESHEET = new URL('../css/embed.css', import.meta.url).href;
const CONTROLS = ['step', 'run', 'reset'];
// The attributes an embed reads (embed.html takes the same names from its query).
export const ATTRIBUTES = ['scenario', 'src', 'source', 'schedule', 'params', 'controls', 'step', 'theme'];
let catalog = null;

// The catalog, fetched once for all embeds.
function loadCatalog() {
  catalog ??= engine.scenarios();
  return catalog;
}

// The schedule an embed plays when none is given: a failing design's
// shortest counterexample (its point is how it breaks), else a round-robin
// run, where every attempt takes turns and they contend.
// Returns { schedule, report }: the search's report says what the design
// does against what it was declared to do.
async function defaultSchedule(id, params) {
  // Bounded: a design of one's own may have more interleavings than an
  // embed should wait for.
  const search = engine.explore(id, { params, runs: 2000 });
  const report = await search.promise;
  if (report.counterexample) return { schedule: report.counterexample.schedule, report };
  return { schedule: (await engine.runScenario(id, { params, strategy: 'round-robin' })).schedule, report };
}

// The playground's address for what a player shows: the scenario (a
// built-in's id, or a design packed whole), its parameters and the
// schedule, as the page's own links hold them (permalink.js).
async function playgroundLink(id, params, schedule) {
  const query = new URLSearchParams();
  if (typeof id === 'string') {
    query.set('s', id);
    for (const [name, value] of Object.entries(params)) query.set(name, String(value));
  } else {
    query.set('src', await pack(id.source));
    if (Object.keys(params).length) query.set('params', JSON.stringify(params));
  }
  if (schedule) query.set('schedule', schedule);
  return new URL(`../?${query}`, import.meta.url).href;
}

// The text of a same-origin scenario file.
async function fetchSource(src) {
  const url = new URL(src, document.baseURI);
  if (url.origin !== location.origin) throw new Error(`src must be on this page's origin (${location.origin}), not ${url.origin}`);
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`src ${JSON.stringify(src)} could not be read (HTTP ${response.status})`);
  const text = await response.text();
  if (text.length > MAX_SOURCE_BYTES) throw new Error(`src is ${text.length} characters; a scenario file has at most ${MAX_SOURCE_BYTES}`);
  return text;
}

// What an embed runs: `{ arg, entry }`, where `arg` is what the engine takes
// (an id, or `{ source, name }`) and `entry` what the catalog says of it.
async function scenarioOf(element) {
  const inline = element.querySelector(':scope > script[type="application/toml"]');
  const given = ['scenario', 'src', 'source'].filter((name) => element.hasAttribute(name));
  if (inline) given.push('an inline <script type="application/toml">');
  if (given.length !== 1) {
    throw new Error(given.length === 0
      ? 'give a scenario: scenario="idem-race", src="design.toml", source="…" or an inline <script type="application/toml">'
      : `give one scenario, not ${given.join(' and ')}`);
  }
  if (element.hasAttribute('scenario')) {
    const id = element.getAttribute('scenario');
    const entries = await loadCatalog();
    const entry = entries.find((e) => e.id === id);
    if (!entry) throw new Error(`unknown scenario ${JSON.stringify(id)}; known: ${entries.map((e) => e.id).join(', ')}`);
    return { arg: id, entry };
  }
  let source;
  if (inline) source = inline.textContent;
  else if (element.hasAttribute('src')) source = await fetchSource(element.getAttribute('src'));
  else source = await unpack(element.getAttribute('source'));
  const arg = { source, name: 'scenario' };
  return { arg, entry: await engine.describeScenario(arg) };
}

class ReplaygroundScenario extends HTMLElement {
  static get observedAttributes() {
    return ATTRIBUTES;
  }

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = STYLESHEET;
    this.frame = el('div', '', 'frame');
    this.root.append(link, this.frame);
    this.frame.addEventListener('click', (event) => this.onClick(event));
    this.error = '';
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
      const { arg: id, entry } = await scenarioOf(this);
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
      const initial = this.hasAttribute('step') ? Number(this.getAttribute('step')) : 0;
      if (!Number.isInteger(initial) || initial < 0) throw new Error('the step attribute must be a whole number');
      const stepper = await engine.stepper(id, { params });
      if (generation !== this.generation) {
        stepper.close();
        return;
      }
      // The engine decodes and checks the schedule: a bad one is reported
      // now, not when Step is pressed. The plan is the run's choices.
      const given = this.getAttribute('schedule');
      const { schedule, report } = given === null ? await defaultSchedule(id, params) : { schedule: given, report: null };
      let full;
      try {
        full = await stepper.setSchedule(schedule);
      } catch (error) {
        stepper.close();
        throw new Error(`the schedule attribute does not fit ${typeof id === 'string' ? `scenario ${id}` : `the design "${entry.title}"`}: ${error.message}`);
      }
      if (generation !== this.generation) {
        stepper.close();
        return;
      }
      this.plan = full.trace.map((step) => step.attempt);
      this.link = await playgroundLink(id, params, full.schedule);
      // A passing run says nothing of the other schedules; the search does.
      this.searched = typeof report?.verdictAsDeclared === 'string' ? report.verdictAsDeclared : null;
      this.stepper?.close();
      this.stepper = stepper;
      this.entry = entry;
      this.controls = controls;
      this.view = await stepper.setSchedule('');
      if (initial > 0) await this.advance(initial);
      this.selected = this.view.trace.length - 1;
      this.frame.dataset.state = 'ready';
      this.render();
    } catch (error) {
      if (generation === this.generation) this.fail(error.message);
    }
  }

  // Takes up to `count` more steps of the plan (the choices the engine
  // decoded from the schedule; nothing here reads schedule text).
  async advance(count) {
    const end = Math.min(this.plan.length, this.view.trace.length + count);
    while (this.view.trace.length < end) {
      this.view = await this.stepper.step(this.plan[this.view.trace.length]);
    }
  }

  // Runs a control's action and redraws; an error is shown beside the
  // player, which stays usable.
  async act(action) {
    try {
      if (action === 'step') await this.advance(1);
      if (action === 'run') await this.advance(this.plan.length);
      if (action === 'reset') this.view = await this.stepper.setSchedule('');
      this.selected = this.view.trace.length - 1;
      this.error = '';
    } catch (error) {
      this.error = error.message;
    }
    this.render();
  }

  // Draws the player: title, controls, lanes, tables of the selected step, verdict.
  render() {
    const { trace, result } = this.view;
    const head = el('div', '', 'head');
    head.append(el('strong', this.entry.title, 'title'));
    // The parameters this embed runs with, where they differ from the scenario's defaults.
    const changed = this.entry.params
      .filter((p) => this.view.params?.[p.name] !== undefined && this.view.params[p.name] !== p.default)
      .map((p) => `${p.name} ${this.view.params[p.name]}`);
    if (changed.length) head.append(el('small', changed.join(' · '), 'params'));
    const buttons = el('div', '', 'controls');
    const labels = { step: ['step', 'Step'], run: ['run', 'Run'], reset: ['reset', 'Reset'] };
    for (const action of this.controls) {
      const button = iconButton(...labels[action]);
      button.dataset.control = action;
      const atEnd = trace.length >= this.plan.length || Boolean(result);
      button.disabled = action === 'reset' ? trace.length === 0 : atEnd;
      buttons.append(button);
    }
    head.append(buttons);
    const open = el('a', 'Open in the playground', 'open');
    open.href = this.link;
    open.target = '_blank';
    open.rel = 'noopener';
    head.append(open);

    const lanes = el('div', '', 'lanes');
    const selectedBox = renderTimeline(lanes, this.view, { selected: this.selected, stepButtons: false });
    const scroller = el('div', '', 'scroll');
    scroller.append(lanes);

    const tables = el('div', '', 'tables');
    tables.append(...databaseSections(this.view, this.selected));

    const verdict = el('p', '', 'verdict');
    const v = verdictOf(this.view);
    // Once the run is over and passes, what the search found of the design
    // against its declaration ("holds, as declared"); a failing run says it.
    const searched = this.view.result?.passed && this.searched
      ? ` Searched: ${this.searched}.` : '';
    verdict.textContent = v.text + searched;
    verdict.dataset.kind = v.kind;
    const parts = [head, scroller, tables, verdict];
    if (this.error) parts.push(el('p', this.error, 'error'));
    this.frame.replaceChildren(...parts);
    keepInView(selectedBox);
  }

  // Clicks inside the player: a control, or a step to select.
  onClick(event) {
    const control = event.target.closest('[data-control]');
    if (control && !control.disabled) {
      this.act(control.dataset.control);
      return;
    }
    const step = event.target.closest('[data-action="select"]');
    if (step) {
      this.selected = Number(step.dataset.step);
      this.render();
    }
  }
}

if (!customElements.get('replayground-scenario')) {
  customElements.define('replayground-scenario', ReplaygroundScenario);
}
