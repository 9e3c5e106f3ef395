// One vocabulary for what attempts and runs are doing, used by the page and
// the embeds alike.

// The parameter every scenario takes, the engine's own (its journal mode).
export const JOURNAL = 'journal';

// The engine's parameters, which every scenario takes and lists last, in
// this order (the engine's `ENGINE_PARAMS`; tests/e2e/params.test.mjs
// checks the catalog says so): the journal mode and `PRAGMA synchronous`.
export const ENGINE_PARAMS = [JOURNAL, 'synchronous'];

// The outcome words the built-in libraries end a refused or failed request
// with (`finish = "error"`): a program's own vocabulary, which the timeline
// colours as a failure. How the engine itself ended an attempt (a crash, a
// lost reply) is typed: the outcome's `ending`.
export const FAILURE_WORDS = ['error', 'failed', 'rejected'];

// What an attempt's status says, in words.
export function statusWord(status, labels) {
  switch (status.kind) {
    case 'runnable': return 'can step';
    case 'blocked': return 'waiting for a lock';
    case 'waiting': return `starts after ${labels[status.on]}`;
    case 'finished': return status.outcome.kind;
    case 'failed': return `failed: ${status.error}`;
    default: return status.kind;
  }
}

// What attempt `attempt` was doing right after step `selected` (-1: before
// the first step): the latest step shows the live status; an earlier one
// shows what that attempt's last step up to it left it doing.
export function statusAt(view, attempt, selected) {
  const { trace, statuses, labels } = view;
  if (selected >= trace.length - 1) return { kind: statuses[attempt].kind, text: statusWord(statuses[attempt], labels) };
  let last = null;
  for (let i = 0; i <= selected; i += 1) if (trace[i].attempt === attempt) last = trace[i];
  if (!last) return { kind: 'not-started', text: 'not started' };
  if (last.progress.kind === 'finished') return { kind: 'finished', text: last.progress.outcome.kind };
  if (last.progress.kind === 'blocked') return { kind: 'blocked', text: 'waiting for a lock' };
  return { kind: 'runnable', text: 'can step' };
}

// What a lock's WAL part says, as badges: the wal-index locks that matter to
// a person (the one writer, a checkpoint, a recovery) and the snapshot a
// reader holds. Empty in rollback-journal mode.
export function walBadges(lock) {
  const badges = [];
  const wal = lock.wal ?? [];
  if (wal.includes('WRITE')) badges.push({ text: 'WAL writer', title: 'holds the WAL write lock: the one connection that may append to the log' });
  if (wal.includes('CKPT')) badges.push({ text: 'checkpointing', title: 'holds the checkpoint lock: copying the log back into the database file' });
  if (wal.includes('RECOVER')) badges.push({ text: 'recovering', title: 'rebuilding the wal-index from the log' });
  if (lock.snapshot !== undefined && lock.snapshot !== null) {
    const n = lock.snapshot;
    const frames = (k) => `${k} frame${k === 1 ? '' : 's'}`;
    const now = lock.logFrames ?? n;
    const stale = now > n;
    const sees = n === 0 ? 'the database file alone, none of the log' : `the database file and the first ${frames(n)} of the log`;
    badges.push({
      // What its reads see, in words a reader of the page knows.
      text: `reads ${n === 0 ? 'the file, no log' : `${frames(n)} of the log`}${stale ? `, stale (log: ${now})` : ''}`,
      title: stale
        ? `its read transaction sees ${sees}, but the log now holds ${frames(now)}: what was committed since is invisible to it, and it may not write (SQLITE_BUSY_SNAPSHOT)`
        : `its read transaction sees ${sees}; what is committed later will be invisible to it`,
      stale,
    });
  }
  return badges;
}

// A lock in words: "SHARED, WAL writer, reads 3 frames of the log".
export function lockText(lock) {
  return [lock.level, ...walBadges(lock).map((b) => b.text)].join(', ');
}

// The lock each attempt holds after step `selected`.
export function locksAt(view, selected) {
  const step = view.trace[selected];
  return step ? step.locks : view.labels.map((label) => ({ attempt: label, level: 'NONE' }));
}

// What a step's SQL returned, in a few words.
export function resultText(result) {
  switch (result.kind) {
    case 'rows': return result.rows.length ? `${result.rows.length} row${result.rows.length > 1 ? 's' : ''}`
      : result.changes ? `${result.changes} changed`
        // A query that answered nothing (its on.none ran).
        : result.columns.length ? 'no row' : 'ok';
    case 'busy': return 'SQLITE_BUSY';
    case 'error': return `error: ${result.message}`;
    default: return '';
  }
}
