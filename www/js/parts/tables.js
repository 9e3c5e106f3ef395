// The committed tables of every database after the selected step, the rows
// that step changed highlighted; in a run that can lose power, which rows
// are not yet on disk and, where the power went out, the rows it lost; and
// each connection's lock. Used by the page and the embeds.
import { cellText, count, el, row } from './dom.js';
import { LOST_MEANING, VOLATILE_MEANING, lostCount, lostTables, showsDisk, volatileCount, volatileRows } from './power.js';
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
  // Where the power can go out, each table says which rows are on disk; a
  // legend says what "not yet" and "lost" mean, whenever a row is either.
  const disk = showsDisk(view);
  const lost = lostTables(step);
  if (disk) sections.push(...diskLegend(step));
  // A database SQLite could not read after the step (a torn write broke
  // it): its tables are not there, and the reason is SQLite's (as text).
  for (const [db, error] of Object.entries(step?.unreadable ?? {})) {
    sections.push(el('p', `${db} could not be read after this step: ${error}`, 'disk-legend legend-lost'));
  }
  for (const [db, byTable] of Object.entries(tables ?? {})) {
    const section = el('section', '', 'db');
    section.append(el('h4', db));
    for (const [name, content] of Object.entries(byTable)) {
      const previous = before.get(`${db}/${name}`) ?? new Set();
      const volatile = volatileRows(step, db, name);
      const gone = lost.find((t) => t.db === db && t.table === name)?.rows ?? [];
      const table = el('table', '', 'results data');
      const caption = gone.length ? `${name} (${content.rows.length}; ${gone.length} lost)` : `${name} (${content.rows.length})`;
      table.append(el('caption', caption), row(disk ? [...content.columns, 'on disk'] : content.columns, 'th'));
      content.rows.forEach((values, i) => {
        const tr = dataRow(values, disk && (volatile.has(i) ? 'volatile' : 'durable'));
        if (!previous.has(JSON.stringify(values))) tr.classList.add('changed');
        table.append(tr);
      });
      // The rows the power loss destroyed, after those that are left.
      for (const values of gone) table.append(dataRow(values, 'lost'));
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

// A table row of `values`; `disk` (false where the run cannot lose power)
// adds the cell that says whether it is on disk: "yes", "not yet"
// (volatile) or "lost" (the power loss destroyed it).
function dataRow(values, disk) {
  const tr = row(values.map(cellText));
  for (const td of tr.children) /** @type {HTMLElement} */ (td).title = td.textContent;
  if (!disk) return tr;
  const words = { durable: ['yes', 'on disk: a power loss would keep it'], volatile: ['not yet', VOLATILE_MEANING], lost: ['lost', LOST_MEANING] };
  const [text, title] = words[disk];
  const cell = el('td', text, `disk disk-${disk}`);
  cell.title = title;
  tr.append(cell);
  if (disk !== 'durable') tr.classList.add(disk);
  return tr;
}

// What the marks of the rows of `step` mean, as paragraphs: rows not yet on
// disk, and the rows a power loss destroyed.
function diskLegend(step) {
  const legend = [];
  // (Rows of tables left out of a long trace are not shown, nor marked.)
  const volatile = step?.tablesLeftOut ? 0 : volatileCount(step);
  if (volatile) {
    legend.push(el('p', `${count(volatile, 'committed row')} not yet on disk (marked "not yet"): a power loss of ${volatile === 1 ? 'its machine now would lose it' : 'their machine now would lose them'}.`, 'disk-legend legend-volatile'));
  }
  if (step?.powerLoss) {
    const total = lostCount(step);
    legend.push(el('p', total
      // (Tables left out of a long trace show no row: the step's box lists them.)
      ? `The power went out at this step and took ${count(total, 'committed row')} (${step.tablesLeftOut ? 'listed in the step\'s box' : 'struck through, marked "lost"'}): ${total === 1 ? 'it had' : 'they had'} not reached the disk.`
      : 'The power went out at this step and took no committed row: all of them were on disk.', total ? 'disk-legend legend-lost' : 'disk-legend legend-lost lost-none'));
  }
  return legend;
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
