// A stepper's view put together from what changed: Stepper.stepChanges and
// Stepper.undoChanges answer with the steps from `traceFrom` on (and their
// sentences), without the initial tables, so that neither the engine's work
// nor the message from the worker grows with the run; `last` is the whole
// view before. The result is the whole view after, as Stepper.step or
// Stepper.undo would have given it.
export function withChanges(last, changes) {
  return {
    ...last,
    ...changes,
    trace: last.trace.slice(0, changes.traceFrom).concat(changes.trace),
    explanation: last.explanation.slice(0, changes.traceFrom).concat(changes.explanation),
    traceFrom: 0,
  };
}
