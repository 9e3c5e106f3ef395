// One vocabulary for what attempts and runs are doing, used by the page and
// the embeds alike.

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

// The lock each attempt holds after step `selected`.
export function locksAt(view, selected) {
  const step = view.trace[selected];
  return step ? step.locks : view.labels.map((label) => ({ attempt: label, level: 'NONE' }));
}

// What a step's SQL returned, in a few words.
export function resultText(result) {
  switch (result.kind) {
    case 'rows': return result.rows.length ? `${result.rows.length} row${result.rows.length > 1 ? 's' : ''}` : (result.changes ? `${result.changes} changed` : 'ok');
    case 'busy': return 'SQLITE_BUSY';
    case 'error': return `error: ${result.message}`;
    default: return '';
  }
}
