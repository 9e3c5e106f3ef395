// The committed tables of every database after the selected step, the rows
// that step changed highlighted; and each connection's lock. Used by the
// page and the embeds.
import { CUT_CHARS, cut, el, row } from './dom.js';
import { locksAt, walBadges } from './words.js';

// Rows of `tables` as JSON strings, per "db/table".
function rowKeys(tables) {
  const keys = new Map();
  for (const [db, byTable] of Object.entries(tables ?? {})) {
    for (const [table, content] of Object.entries(byTable)) {
      keys.set(`${db}/${table}`, new Set(content.rows.map((r) => JSON.stringify(r))));
    }
  }
  return keys;
}

// A cell's text: NULL, a blob's first bytes in hex, the value otherwise; a
// long value is cut (its length said), as a note cuts one.
function cellText(v) {
  if (v === null) return 'NULL';
  if (Array.isArray(v)) {
    const hex = v.slice(0, CUT_CHARS / 2).map((b) => Number(b).toString(16).padStart(2, '0')).join('');
    return v.length > CUT_CHARS / 2 ? `x'${hex}…' (${v.length.toLocaleString('en')} bytes)` : `x'${hex}'`;
  }
  return cut(typeof v === 'object' ? JSON.stringify(v) : String(v));
}

// One section per database with one table per table, after step `selected`.
export function databaseSections(view, selected) {
  const { trace, initialTables } = view;
  const step = trace[selected];
  const tables = step ? step.tables : initialTables;
  const before = rowKeys(selected > 0 ? trace[selected - 1].tables : initialTables);
  const sections = [];
  // A long run's trace keeps a bounded amount of tables: past it, say so.
  if (step ? step.tablesLeftOut : view.initialTablesLeftOut) {
    sections.push(el('p', step ? 'The tables after this step are not shown: the run\'s trace already holds all the bytes of tables a trace may keep.' : 'The tables before the first step are not shown: they are more bytes than a trace may keep.', 'explanation'));
  }
  for (const [db, byTable] of Object.entries(tables ?? {})) {
    const section = el('section', '', 'db');
    section.append(el('h4', db));
    for (const [name, content] of Object.entries(byTable)) {
      const previous = before.get(`${db}/${name}`) ?? new Set();
      const table = el('table', '', 'results data');
      table.append(el('caption', `${name} (${content.rows.length})`), row(content.columns, 'th'));
      for (const values of content.rows) {
        const tr = row(values.map(cellText));
        for (const td of tr.children) td.title = td.textContent;
        if (!previous.has(JSON.stringify(values))) tr.className = 'changed';
        table.append(tr);
      }
      // A wide table scrolls inside its box, which the keyboard can reach.
      const scroll = el('div', '', 'table-scroll');
      scroll.tabIndex = 0;
      scroll.setAttribute('role', 'region');
      scroll.setAttribute('aria-label', `${db}: ${name}`);
      scroll.append(table);
      section.append(scroll);
    }
    sections.push(section);
  }
  return sections;
}

// Each connection's lock after step `selected`, as list items.
export function lockItems(view, selected) {
  return locksAt(view, selected).map((l) => {
    const item = el('li');
    const held = el('span', '', 'held');
    held.append(el('span', l.level, `lock lock-${l.level.toLowerCase()}`));
    for (const badge of walBadges(l)) {
      const span = el('span', badge.text, 'lock lock-wal');
      span.title = badge.title;
      held.append(span);
    }
    item.append(el('span', l.attempt), held);
    return item;
  });
}
