// The permalink: the address always names what is shown (the scenario or
// the design, its parameters, the run's schedule and the selected step), a
// new run making a history entry; a link, or Back and Forward, opens what
// the address says, a bad part dropped and named in the link notice. It
// owns the address, #link-error and Copy link.
import * as engine from './engine.js';
import { byId as $, number, scheduleText } from './parts/dom.js';
import { unpack } from './parts/pack.js';
import { checkText } from './parts/verdict.js';
import * as editor from './editor.js';
import * as run from './run.js';
import * as scenario from './scenario.js';

const ui = { linkError: $('link-error'), landingHint: $('landing-hint') };

// The scenario an address that names none (or one that cannot be opened)
// opens: the engine's (scenarios::LANDING), read with the first link.
let landingScenario = null;
async function landing() {
  landingScenario ??= (await engine.parsePermalink('')).landing;
  return landingScenario;
}
// The landing's one sentence of what to do goes with the first scenario
// loaded after it.
scenario.onLeave(() => { ui.landingHint.hidden = true; });
// The longest address a shared link may be: common servers and proxies
// refuse longer request lines (8 KiB).
const MAX_LINK_CHARS = 8000;
// While the page shows what the address says, it writes no new history entry.
let restoring = false;

// Shows `message` in the link-error notice (or hides it).
export function notice(message) {
  // Unchanged, it is left alone (each step of a run calls this).
  if (ui.linkError.textContent === message && ui.linkError.hidden === !message) return;
  ui.linkError.textContent = message;
  ui.linkError.hidden = !message;
}

// The URL of the current scenario, parameters, schedule and selected step.
function permalink() {
  const { source, packed, entry, params } = scenario.shown();
  const view = run.current();
  const selected = run.selection();
  const query = new URLSearchParams();
  if (source) {
    // A design travels whole in the link, packed; its parameters as JSON.
    query.set('src', packed);
    if (Object.keys(params).length) query.set('params', JSON.stringify(params));
  } else {
    query.set('s', entry.id);
    for (const [name, value] of Object.entries(params)) query.set(name, String(value));
  }
  if (view?.schedule) query.set('schedule', view.schedule);
  if (selected >= 0 && view && selected < view.trace.length - 1) query.set('step', String(selected + 1));
  return `${location.pathname}?${query}`;
}

// Keeps the address in step with what is shown. A new scenario, new
// parameters or a new schedule make a history entry (Back and Forward move
// between them); moving the selection only replaces the current one.
// While the page is still opening what the address says, it leaves the
// address alone; `replace` rewrites the current entry instead of adding one.
export function update({ replace = false } = {}) {
  if (restoring) return;
  const url = permalink();
  if (url.length > MAX_LINK_CHARS) {
    // Refused, not cut: a cut link would open something else.
    notice(`This design is too long for a link (${number(url.length)} characters; links keep to ${number(MAX_LINK_CHARS)}). The address still shows the last run that fit; save the design as a file and embed it with src, or keep it as a draft.`);
    return;
  }
  const here = `${location.pathname}${location.search}`;
  if (url === here) return;
  const previous = new URLSearchParams(location.search);
  const next = new URL(url, location.href).searchParams;
  previous.delete('step');
  next.delete('step');
  const sameRun = previous.toString() === next.toString();
  if (replace || sameRun) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

// Opens what the address says (a link, or Back and Forward): the scenario,
// its parameters, the schedule and the step; a bad part is dropped and named.
async function openLink() {
  if (new URLSearchParams(location.search).has('src')) {
    await openDesignLink();
    return;
  }
  const problems = [];
  let link = { id: null, landing: null, params: {}, schedule: null, step: null, problems: [] };
  try {
    link = await readLink();
    landingScenario = link.landing;
    problems.push(...link.problems);
  } catch (error) {
    problems.push(error.message);
  }
  const id = link.id ?? await landing();
  const quietly = { draw: false };
  try {
    await scenario.load(id, link.params, link.schedule, quietly);
  } catch (error) {
    if (error.scheduleOnly) {
      problems.push(`the schedule was dropped: ${error.message}`);
    } else if (link.schedule) {
      problems.push(`the schedule was dropped: ${error.message}`);
      await scenario.load(id, link.params, null, quietly);
    } else {
      problems.push(error.message);
      await scenario.load(await landing(), {}, null, quietly);
    }
  }
  // A visitor who came with no link lands on a broken design, told what to do.
  ui.landingHint.hidden = !(location.search === '' && scenario.shownScenario() === await landing());
  if (link.step !== null && link.step !== undefined) {
    const steps = run.current().trace.length;
    if (link.step <= steps) {
      run.select(link.step - 1);
    } else {
      problems.push(`the step was dropped: step ${link.step} is not in this run (it has ${steps} steps)`);
    }
  }
  notice(problems.length ? `Part of this link was dropped: ${problems.join('; ')}.` : '');
  explainLinkedRun();
  run.render();
}

// A link to a failing run opens with its summary and one sentence per step.
function explainLinkedRun() {
  const view = run.current();
  const { result } = view;
  if (result && !result.passed) {
    const failed = result.checks.filter((c) => !c.pass).map(checkText);
    run.status(`This link shows a failing run of ${scenario.runContext(`schedule ${scheduleText(result.schedule)}`)}: ${failed.join('; ')}.`, 'fail');
    run.showExplanation(view.explanation, view.schedule);
  }
}

// Opens a link that carries a design (src=, packed): the design, its
// parameters, the schedule and the step. The design is untrusted: the
// engine runs it in its worker within the format's bounds, and its text is
// shown as text.
async function openDesignLink() {
  const query = new URLSearchParams(location.search);
  const problems = [];
  let source;
  try {
    source = await unpack(query.get('src'));
  } catch (error) {
    notice(`This link's design could not be opened: ${error.message}.`);
    await scenario.load(await landing(), {});
    run.render();
    return;
  }
  let params = {};
  if (query.has('params')) {
    let given = null;
    try {
      given = JSON.parse(query.get('params'));
    } catch {
      // Named below.
    }
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) params = given;
    else problems.push('the params were dropped: they are not a JSON object');
  }
  try {
    await scenario.load({ source }, params, query.get('schedule'));
  } catch (error) {
    try {
      // What the link gave besides the design is dropped, and said.
      const dropped = [query.has('schedule') && 'schedule', query.has('params') && 'params'].filter(Boolean);
      problems.push(`the ${dropped.join(' and ') || 'link'} ${dropped.length === 1 ? 'was' : 'were'} dropped: ${error.message}`);
      await scenario.load({ source }, {});
    } catch (again) {
      notice(`This link's design could not be opened: ${again.message}.`);
      editor.open(source);
      await scenario.load(await landing(), {});
      run.render();
      return;
    }
  }
  if (query.has('step')) {
    const step = Number(query.get('step'));
    const steps = run.current().trace.length;
    if (Number.isInteger(step) && step >= 1 && step <= steps) run.select(step - 1);
    else problems.push(`the step was dropped: step ${JSON.stringify(query.get('step'))} is not in this run (it has ${steps} steps)`);
  }
  notice(problems.length ? `Part of this link was dropped: ${problems.join('; ')}.` : '');
  explainLinkedRun();
  run.render();
}

// Opens what the address says without adding a history entry, then
// writes back the address of what is shown (a dropped part disappears).
export async function restore() {
  restoring = true;
  try {
    await run.busy(openLink);
  } finally {
    restoring = false;
  }
  update({ replace: true });
}

// Back and Forward: show the run the address names.
window.addEventListener('popstate', restore);

// Reads the link through the engine's permalink parser: { id, landing,
// params, schedule, step, problems } (a bad part is dropped and named in problems).
async function readLink() {
  const link = await engine.parsePermalink(location.search);
  return { id: link.scenario, landing: link.landing, params: link.params, schedule: link.schedule, step: link.step ?? null, problems: link.problems };
}

// Permalink's button, by its data-action.
export const actions = {
  // Copies the address of this run (it always holds the run shown).
  async 'copy-link'() {
    const url = permalink();
    if (url.length > MAX_LINK_CHARS) {
      run.status(`Nothing was copied: this design is too long for a link (${number(url.length)} characters; links keep to ${number(MAX_LINK_CHARS)}). Save it as a draft or as a file.`, 'fail');
      return;
    }
    try {
      await navigator.clipboard.writeText(location.href);
      run.status('The link to this run was copied.');
    } catch (error) {
      run.status(`The link could not be copied (${error.message}); copy it from the address bar.`, 'fail');
    }
  },
};
