// The verdict of a run and its checks (expected against actual). Used by
// the page and the embeds.
import { count, cut, row, scheduleText } from './dom.js';

// A failed check in a sentence, its long values cut.
export const checkText = (c) => `${cut(c.name)}: expected ${cut(c.expected)}, got ${cut(c.actual)}`;

// { text, kind } for the run in `view`: over (pass or fail) or not yet.
export function verdictOf(view) {
  const { result, verdict, runnable, labels, trace } = view;
  if (!result) {
    const who = runnable.map((i) => labels[i]);
    return {
      text: `${count(trace.length, 'step')} taken; the run is not over: ${who.length ? `${who.join(', ')} can step` : 'nobody can step'}.`,
      kind: '',
    };
  }
  const failed = result.checks.filter((c) => !c.pass);
  const deadlock = verdict?.kind === 'deadlock' ? ` Deadlock: ${verdict.waits.join('; ')}.` : '';
  // A run that goes round for ever: its steps from+1..to repeat.
  const loops = verdict?.kind === 'loops'
    ? ` ${verdict.to - verdict.from === 1 ? `Step ${verdict.to} repeats` : `Steps ${verdict.from + 1} to ${verdict.to} repeat`} for ever: the run never completes.`
    : '';
  // A failing run shows whether its design was declared to fail (a passing
  // one shows nothing of the other schedules).
  const declared = typeof result.asDeclared === 'boolean'
    ? `${result.verdictAsDeclared[0].toUpperCase()}${result.verdictAsDeclared.slice(1)}: `
    : '';
  if (failed.length) {
    return {
      text: `${declared}${count(failed.length, 'check')} failed for schedule ${scheduleText(result.schedule)}: ${failed.map(checkText).join('; ')}.${deadlock}${loops}`,
      kind: 'fail',
    };
  }
  return { text: `Every check passed (${result.checks.length}) for schedule ${scheduleText(result.schedule)}.`, kind: 'pass' };
}

// The checks as a table, or nothing while the run is not over.
export function checksRows(view) {
  const { result } = view;
  if (!result) return [];
  return [row(['check', 'expected', 'actual', ''], 'th'), ...result.checks.map((c) => {
    const tr = row([cut(c.name), cut(c.expected), cut(c.actual), c.pass ? 'pass' : 'FAIL']);
    tr.className = c.pass ? 'pass' : 'fail';
    return tr;
  })];
}

