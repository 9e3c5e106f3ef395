// Small DOM helpers and the words the page and the embeds share. Every piece
// of text goes in with textContent, never as HTML.

/** The page's element with this id (the page has it). @param {string} id */
export const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

// Creates an element with text content and an optional class.
export function el(tag, text = '', className = '') {
  const node = document.createElement(tag);
  if (text !== '') node.textContent = text;
  if (className) node.className = className;
  return node;
}

// A table row of text cells.
export function row(cells, tag = 'td') {
  const tr = el('tr');
  for (const text of cells) tr.append(el(tag, String(text)));
  return tr;
}

// 1234567 as "1,234,567". Whole numbers are grouped here, not by
// toLocaleString: a page's first toLocaleString call loads ICU's number data,
// about 20 ms spent before the page's first result could be drawn.
export function number(n) {
  const value = Number(n);
  if (!Number.isSafeInteger(value)) return value.toLocaleString('en');
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// "1 run", "3 runs": a count and its noun, plural by English's rule (the
// page's text is English): the singular for one, the plural otherwise.
export function count(n, noun, pluralNoun = `${noun}s`) {
  return `${number(n)} ${Math.abs(Number(n)) === 1 ? noun : pluralNoun}`;
}

// Inline SVG icons: no font has to carry a glyph for them.
const ICONS = {
  step: 'M5 3 L13 8 L5 13 Z',
  run: 'M2 3 L8 8 L2 13 Z M8 3 L14 8 L8 13 Z',
  reset: 'M3 3 H5 V13 H3 Z M14 3 L6 8 L14 13 Z',
  undo: 'M2 8 L8 3 V6 C12 6 14 8 14 13 C12 10 11 10 8 10 V13 Z',
  power: 'M9 1 L3 9 H7 L6 15 L13 6 H9 Z',
};
export function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '12');
  svg.setAttribute('height', '12');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name]);
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

// A button with an icon and a label.
export function iconButton(name, label) {
  const button = el('button');
  button.type = 'button';
  button.append(icon(name), document.createTextNode(` ${label}`));
  return button;
}

// A schedule in a sentence: a long one (a loop run to its bound) is cut, as
// the address and the downloads keep all of it.
export function scheduleText(schedule) {
  return schedule.length > 80 ? `${schedule.slice(0, 64)}… (${schedule.length.toLocaleString('en')} characters)` : schedule;
}

// The most characters of a value shown in a sentence or a table cell (a
// note says the same of the values it shows).
export const CUT_CHARS = 200;

// A value's text as shown: past `limit` characters (code points, never
// half an emoji) it is cut, and its length said.
export function cut(text, limit = CUT_CHARS) {
  if (text.length <= limit) return text;
  let kept = 0;
  let end = 0;
  for (const ch of text) {
    if (kept === limit) break;
    kept += 1;
    end += ch.length;
  }
  if (end === text.length) return text;
  let total = kept;
  for (const _ of text.slice(end)) total += 1;
  return `${text.slice(0, end)}… (${total.toLocaleString('en')} characters)`;
}

// A cell's text: NULL, a blob's first bytes in hex, the value otherwise; a
// long value is cut (its length said), as a note cuts one.
export function cellText(v) {
  if (v === null) return 'NULL';
  if (Array.isArray(v)) {
    const hex = v.slice(0, CUT_CHARS / 2).map((b) => Number(b).toString(16).padStart(2, '0')).join('');
    return v.length > CUT_CHARS / 2 ? `x'${hex}…' (${v.length.toLocaleString('en')} bytes)` : `x'${hex}'`;
  }
  return cut(typeof v === 'object' ? JSON.stringify(v) : String(v));
}
