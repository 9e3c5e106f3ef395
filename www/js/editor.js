// The design editor: a scenario file's text with its line numbers, the
// engine's check as one types (the first mistake marked at its line and
// column), and the drafts kept in this browser. It owns its part of the
// page (#editor and #drafts) and its state; the page opens it, reads its
// text, and says when its design ran or was kept.
import * as engine from './engine.js';
import { byId as $, count, el } from './parts/dom.js';
import { ENGINE_PARAMS } from './parts/words.js';

// Where drafts are kept in this browser.
const DRAFTS_KEY = 'replayground.drafts';

// A blank design to start from.
export const TEMPLATE = `# A design of your own: what you suspect may break, and what must hold.
title = "My design"
fails = false

[databases.app]
schema = """
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
"""

[[attempts]]
replicas = 2
steps = [
  { name = "begin", sql = "BEGIN IMMEDIATE" },
  { name = "insert", sql = "INSERT INTO items (name) VALUES (:label)" },
  { name = "commit", sql = "COMMIT", on.ok = { finish = "done" } },
]

[[checks]]
name = "one row per attempt"
sql = "SELECT count(*) FROM items"
expect = 2
`;

const ui = {
  editor: $('editor'),
  source: /** @type {HTMLTextAreaElement} */ ($('source')),
  lines: $('source-lines'),
  status: $('source-status'),
  goto: $('source-goto'),
  note: $('source-note'),
  drafts: $('drafts'),
};

// Whether the editor holds text not yet run or saved.
let dirty = false;
// The check under way (a newer one makes an older one's answer moot).
let checking = 0;
let checkTimer = null;
// The first mistake the check found: { line, column } or null.
let mistake = null;
let numberedLines = -1;
// After Escape, Tab leaves the editor instead of indenting.
let tabLeaves = false;

// The editor's text.
export const text = () => ui.source.value;

// Whether it is open.
export const isOpen = () => !ui.editor.hidden;

// Whether it holds text not yet run or kept.
export const isDirty = () => dirty;

// Its design ran, or was kept: nothing of it would be lost now.
export function settled() {
  dirty = false;
}

// Says `message` under the text (kind 'pass' or 'fail').
export function say(message, kind) {
  ui.status.textContent = message;
  ui.status.dataset.kind = kind;
}

// Opens the editor with `source`; asks first when that would lose changes.
// Returns whether it opened.
export function open(source) {
  if (isOpen() && dirty && ui.source.value !== source
    && !window.confirm('Replace the text in the editor? It has changes you have not run or saved.')) {
    return false;
  }
  dirty = false;
  ui.editor.hidden = false;
  ui.source.value = source;
  // The editor at the window's top: its text, status line, buttons and,
  // on a laptop, Run below them are in view.
  ui.source.focus({ preventScroll: true });
  ui.editor.scrollIntoView({ block: 'start', behavior: 'instant' });
  ui.source.setSelectionRange(0, 0);
  ui.source.scrollTop = 0;
  check();
  return true;
}

// Closes the editor (its text stays for the next open).
export function close() {
  ui.editor.hidden = true;
}

// Parses the editor's text in the engine's worker and says what it found:
// the design's title, or the first mistake at its line and column.
export async function check() {
  const mine = ++checking;
  try {
    const checked = await engine.checkScenario({ source: ui.source.value, name: 'design' });
    if (mine !== checking) return;
    if ('entry' in checked) {
      const { entry } = checked;
      say(`ok: "${entry.title}", ${count(entry.params.filter((p) => !ENGINE_PARAMS.includes(p.name)).length, 'parameter')}${entry.fails ? ', meant to fail' : ''}`, 'pass');
      markMistake(null);
    } else {
      say(checked.error, 'fail');
      markMistake(checked.line === undefined ? null : { line: checked.line, column: checked.column ?? 1 }, checked.error);
    }
  } catch (error) {
    // The engine could not answer (restarted, or the text was refused
    // before it was read: too large).
    if (mine !== checking) return;
    say(error.message, 'fail');
    markMistake(null);
  }
}

// The editor's line numbers, the mistake's line marked; and the button that
// puts the caret at the mistake.
function numberLines(force = false) {
  const lines = ui.source.value.split('\n').length;
  if (lines === numberedLines && !force) return;
  numberedLines = lines;
  const spans = [];
  for (let n = 1; n <= lines; n += 1) {
    const span = el('span', `${n}\n`);
    if (mistake && mistake.line === n) span.className = 'mistake';
    spans.push(span);
  }
  ui.lines.replaceChildren(...spans);
  ui.lines.scrollTop = ui.source.scrollTop;
}

function markMistake(at, message = '') {
  mistake = at;
  ui.note.textContent = message.replace(/^invalid scenario: /, '');
  numberLines(true);
  placeNote();
  ui.goto.hidden = !at;
  if (at) ui.goto.textContent = `Show line ${at.line}, column ${at.column}`;
}

// Puts the caret at the mistake the editor's status names.
export function gotoMistake() {
  if (!mistake) return;
  const lines = ui.source.value.split('\n');
  const line = Math.min(mistake.line, lines.length);
  // Columns count characters (code points), as the engine counts them.
  const before = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  const column = [...lines[line - 1]].slice(0, mistake.column - 1).join('').length;
  const offset = before + column;
  ui.source.focus();
  ui.source.setSelectionRange(offset, offset);
  const lineHeight = parseFloat(getComputedStyle(ui.source).lineHeight) || 16;
  ui.source.scrollTop = Math.max(0, (line - 3) * lineHeight);
}

// Puts the mistake's message just under its line, in the text's box; a
// line scrolled out of the box has it at that edge, with an arrow.
function placeNote() {
  if (!mistake || !isOpen()) {
    ui.note.hidden = true;
    return;
  }
  const style = getComputedStyle(ui.source);
  const lineHeight = parseFloat(style.lineHeight) || 16;
  const top = parseFloat(style.paddingTop) || 0;
  const below = top + mistake.line * lineHeight - ui.source.scrollTop;
  const box = ui.source.clientHeight;
  ui.note.hidden = false;
  const height = ui.note.offsetHeight;
  const message = ui.note.textContent.replace(/^[↑↓] /, '');
  if (below - lineHeight < 0) {
    ui.note.textContent = `↑ ${message}`;
    ui.note.style.top = '0px';
  } else if (below + height > box) {
    ui.note.textContent = below - lineHeight > box ? `↓ ${message}` : message;
    ui.note.style.top = `${Math.max(0, box - height)}px`;
  } else {
    ui.note.textContent = message;
    ui.note.style.top = `${below}px`;
  }
}

ui.source.addEventListener('scroll', () => {
  ui.lines.scrollTop = ui.source.scrollTop;
  placeNote();
});
new ResizeObserver(() => placeNote()).observe(ui.source);

ui.source.addEventListener('input', () => {
  numberLines();
  dirty = true;
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 300);
});

// Tab indents (the browser's undo keeps it); Escape, then Tab, leaves.
ui.source.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    tabLeaves = true;
    return;
  }
  if (event.key === 'Tab' && !event.shiftKey && !event.ctrlKey && !event.altKey && !event.metaKey && !tabLeaves) {
    event.preventDefault();
    document.execCommand('insertText', false, '  ');
  }
  tabLeaves = false;
});

// ---------------------------------------------------------------- drafts

// The drafts kept in this browser: [{ title, source, saved }].
export function drafts() {
  try {
    const kept = JSON.parse(localStorage.getItem(DRAFTS_KEY) ?? '[]');
    return Array.isArray(kept) ? kept.filter((d) => typeof d?.title === 'string' && typeof d?.source === 'string') : [];
  } catch {
    return [];
  }
}

// Keeps `list` as the drafts and lists them; throws if this browser refuses.
export function keepDrafts(list) {
  localStorage.setItem(DRAFTS_KEY, JSON.stringify(list));
  renderDrafts();
}

// Lists My scenarios.
export function renderDrafts() {
  ui.drafts.replaceChildren(...drafts().map((draft, i) => {
    const item = el('li');
    const openIt = el('button', draft.title, 'secondary');
    openIt.type = 'button';
    openIt.dataset.action = 'open-draft';
    openIt.dataset.draft = String(i);
    const remove = el('button', 'Delete', 'secondary');
    remove.type = 'button';
    remove.dataset.action = 'delete-draft';
    remove.dataset.draft = String(i);
    remove.setAttribute('aria-label', `Delete the draft ${draft.title}`);
    item.append(openIt, remove);
    return item;
  }));
}
