// The scenario's parameter controls: one per declaration of the catalog's
// entry (name, type, range, default, meaning), and the journal mode beside
// them. It owns #params, #journal and #wal-note; the page draws them for a
// scenario and reads what they say.
import { byId as $, el } from './parts/dom.js';
import { JOURNAL } from './parts/words.js';

const ui = {
  params: /** @type {HTMLFormElement} */ ($('params')),
  journal: /** @type {HTMLFieldSetElement} */ ($('journal')),
  walNote: $('wal-note'),
};

// The journal mode the switch shows.
const checkedJournal = () => /** @type {HTMLInputElement | null} */ (ui.journal.querySelector('input:checked'))?.value;

// Calls `listener(mode)` when the journal switch changes.
export function onJournal(listener) {
  ui.journal.addEventListener('change', () => listener(checkedJournal()));
}

// Every control comes from the scenario's parameter declarations (the
// catalog's `params`: name, type, range, default, meaning); the page knows no
// parameter by name.

// "crashPoint" -> "crash point".
export const words = (name) => name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

// A value with its unit, for people: "60 s", "5 min".
function withUnit(param, value) {
  if (param.unit !== 'seconds') return String(value);
  return value >= 60 && value % 60 === 0 ? `${value / 60} min` : `${value} s`;
}

// The value a parameter has in the run shown (`inUse`, as the engine
// reports a run's parameters), or its default.
const currentValue = (param, inUse) => inUse?.[param.name] ?? param.default;

// One labelled control for parameter `param`, showing the value in use.
function paramControl(param, inUse) {
  const label = el('label', words(param.name));
  label.title = param.meaning;
  const value = currentValue(param, inUse);
  let input;
  if (param.type === 'choice') {
    input = el('select');
    for (const option of param.options) {
      const item = el('option', option);
      item.value = option;
      input.append(item);
    }
    input.value = String(value);
  } else if (param.type === 'whole' && param.marks.length) {
    // A slider over the values worth trying (the one in use among them).
    const marks = [...new Set([...param.marks, value])].sort((a, b) => a - b);
    input = el('input');
    input.type = 'range';
    input.min = '0';
    input.max = String(marks.length - 1);
    input.step = '1';
    input.value = String(marks.indexOf(value));
    input.dataset.marks = JSON.stringify(marks);
    const shown = el('output', withUnit(param, value), 'param-value');
    input.addEventListener('input', () => { shown.textContent = withUnit(param, marks[Number(input.value)]); });
    input.setAttribute('aria-valuetext', withUnit(param, value));
    input.name = param.name;
    label.append(input, shown);
    return label;
  } else if (param.type === 'whole') {
    input = el('input');
    input.type = 'number';
    input.min = String(param.min);
    input.max = String(param.max);
    input.step = String(param.multipleOf);
    input.required = true;
    input.value = String(value);
  } else {
    input = el('input');
    input.type = 'text';
    input.maxLength = param.maxChars;
    input.required = true;
    input.autocomplete = 'off';
    input.value = String(value);
  }
  input.name = param.name;
  label.append(input);
  return label;
}

// The engine's parameter every scenario takes: the journal mode, switched
// beside the scenario rather than among its own parameters.
export const journalParam = (entry) => entry.params.find((p) => p.name === JOURNAL) ?? { name: JOURNAL, default: 'rollback' };

// Shows the journal mode in use, and what the scenario says of WAL mode.
export function renderJournal(entry, inUse) {
  const mode = currentValue(journalParam(entry), inUse);
  for (const input of ui.journal.querySelectorAll('input')) input.checked = input.value === mode;
  const note = mode === 'wal' ? entry.walNote ?? '' : '';
  ui.walNote.textContent = note;
  ui.walNote.hidden = note === '';
}

// Draws the parameter controls of scenario `entry` (its catalog entry),
// showing the values in use (`inUse`: the run's parameters).
export function render(entry, inUse) {
  renderJournal(entry, inUse);
  const params = entry.params.filter((p) => p.name !== JOURNAL);
  ui.params.replaceChildren(...params.map((param) => paramControl(param, inUse)));
  ui.params.hidden = params.length === 0;
  if (params.length) {
    const apply = el('button', 'Apply');
    apply.type = 'submit';
    ui.params.append(apply);
  }
}

// Reads the parameter controls: the values that differ from the defaults,
// typed as declared (the engine checks them).
export function read(entry) {
  const params = {};
  const journal = checkedJournal();
  if (journal && journal !== journalParam(entry).default) params[JOURNAL] = journal;
  for (const param of entry.params.filter((p) => p.name !== JOURNAL)) {
    const input = /** @type {HTMLInputElement | null} */ (ui.params.querySelector(`[name="${param.name}"]`));
    if (!input) continue;
    /** @type {string | number} */
    let value = input.value;
    if (input.dataset.marks) value = JSON.parse(input.dataset.marks)[Number(value)];
    else if (param.type === 'whole') value = value.trim() === '' ? NaN : Number(value);
    if (value !== param.default) params[param.name] = Number.isNaN(value) ? input.value : value;
  }
  return params;
}
