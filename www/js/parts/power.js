// Power loss in a recorded run, in words the timeline and the tables share
// (on the page and in the embeds). A step of a scenario that can lose power
// says which of its committed rows are not yet on disk (`volatile`: indices
// into its tables' rows), and the step where the power went out says which
// committed rows of the step before it destroyed (`powerLoss.lost`). The
// engine leaves both out where they are empty, and out of every step of a
// scenario that cannot lose power.
import { cellText, count, el, icon } from './dom.js';

// What a row "not yet" on disk and a row "lost" mean, in a cell's title.
export const VOLATILE_MEANING = 'committed, but not yet on disk: a power loss of its machine now would lose this row';
export const LOST_MEANING = 'committed before the power went out, and lost with it: it had not reached the disk';

// Whether the run `view` shows durability at all: some step of it has rows
// not yet on disk, or a power loss. (A run where nothing is volatile yet
// shows no "on disk" column: nothing in it says what is on disk.)
export function showsDisk(view) {
  return view.trace.some((step) => step.volatile || step.powerLoss);
}

// The indices of the rows of `db`'s `table` not yet on disk after `step`.
export function volatileRows(step, db, table) {
  return new Set(step?.volatile?.[db]?.[table] ?? []);
}

// The rows the power loss of `step` destroyed, as [{ db, table, rows }]
// (empty when it lost none, or when the power did not go out there).
export function lostTables(step) {
  const lost = [];
  for (const [db, byTable] of Object.entries(step?.powerLoss?.lost ?? {})) {
    for (const [table, rows] of Object.entries(byTable)) {
      if (rows.length) lost.push({ db, table, rows });
    }
  }
  return lost;
}

// How many committed rows the power loss of `step` destroyed.
export function lostCount(step) {
  return lostTables(step).reduce((n, t) => n + t.rows.length, 0);
}

// How many rows `step` has not yet on disk, in every table.
export function volatileCount(step) {
  return Object.values(step?.volatile ?? {}).flatMap((byTable) => Object.values(byTable)).reduce((n, rows) => n + rows.length, 0);
}

// The rows a step box lists at most; the tables show them all.
const LISTED = 4;

// What a power loss destroyed, in one sentence: "Lost 2 committed rows:
// server.db orders (1, 1); server.db receipts (order-7, created order 1)".
export function lostSentence(step) {
  const lost = lostTables(step);
  const total = lostCount(step);
  if (total === 0) return 'Lost no committed row: everything committed was on disk.';
  const listed = [];
  for (const { db, table, rows } of lost) {
    for (const values of rows) {
      if (listed.length < LISTED) listed.push(`${db} ${table} (${values.map(cellText).join(', ')})`);
    }
  }
  const more = total > LISTED ? `; and ${count(total - LISTED, 'more row')} (the tables show them)` : '';
  return `Lost ${count(total, 'committed row')}: ${listed.join('; ')}${more}.`;
}

// The badge that marks the step where the power went out: an icon and
// words, never a colour alone.
export function powerLossBadge() {
  const badge = el('span', '', 'power-badge');
  badge.append(icon('power'), document.createTextNode('power loss'));
  return badge;
}
