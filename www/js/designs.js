// A person's designs on the page: an editable copy of the scenario shown, a
// new design, the editor's design run as the scenario shown, and the drafts
// kept in this browser (saved, opened, deleted). The editor (editor.js)
// owns the text and the drafts' list; this joins its buttons to the
// scenario shown, and owns #new-design, which waits for the page.
import * as engine from './engine.js';
import { byId as $ } from './parts/dom.js';
import { ENGINE_PARAMS } from './parts/words.js';
import * as editor from './editor.js';
import * as run from './run.js';
import * as scenario from './scenario.js';

// A blank design opened before the first scenario was drawn would be
// closed by it: the button waits for the page (ready).
export function ready() {
  /** @type {HTMLButtonElement} */ ($('new-design')).disabled = false;
}

// Keeps `drafts` in this browser; says so in the status line if it refuses.
function keepDrafts(drafts) {
  try {
    editor.keepDrafts(drafts);
    return true;
  } catch (error) {
    run.status(`The draft could not be kept in this browser: ${error.message}`, 'fail');
    return false;
  }
}

// A design's declaration that it fails (`fails = true`, on a line of its own).
const FAILS_TRUE = /^fails\s*=\s*true[ \t]*$/m;

// Offers to flip `fails = true` when a search of the design in the editor
// covered every schedule and found none that fails (a copy of a broken
// built-in, fixed); any other report takes the offer back.
export function offerFlip(report) {
  const shown = scenario.shown();
  const holds = !report.counterexample && report.complete && report.asDeclared === false;
  $('flip-fails').hidden = !(holds && shown.source && editor.isOpen()
    && editor.text() === shown.source && FAILS_TRUE.test(shown.source));
}

scenario.onLeave(() => { $('flip-fails').hidden = true; });

// The editor's buttons, and the drafts', by their data-action.
export const actions = {
  // Opens an editable copy of the scenario shown (a built-in's file, or the design).
  async 'edit-copy'() {
    const shown = scenario.shown();
    try {
      let source = shown.source ?? await engine.scenarioSource(shown.entry.id);
      // The copy runs as shown: an engine parameter (the journal mode, the
      // synchronous level) other than the file's own default goes into the
      // copy, replacing the file's own line.
      for (const name of ENGINE_PARAMS) {
        const value = shown.params[name];
        const param = shown.entry.params.find((p) => p.name === name);
        if (value && param && value !== param.default) {
          source = `${name} = "${value}"\n${source.replace(new RegExp(`^${name}\\s*=.*\\n`, 'm'), '')}`;
        }
      }
      if (editor.open(source)) document.body.classList.remove('drafting');
    } catch (error) {
      run.status(error.message, 'fail');
    }
  },
  // Declares that the design holds (fails = false) and runs it so.
  async 'flip-fails'(target) {
    target.hidden = true;
    if (!editor.open(editor.text().replace(FAILS_TRUE, 'fails = false'))) return;
    await actions['apply-source']();
  },
  // Puts the caret at the mistake the editor's status names.
  'goto-mistake'() {
    editor.gotoMistake();
  },
  // Opens the editor on a blank design.
  'new-design'() {
    if (editor.open(editor.TEMPLATE)) document.body.classList.add('drafting');
  },
  // Makes the editor's design the scenario shown (its link holds it), to
  // step by hand; returns whether it is.
  async 'apply-source'() {
    const source = editor.text();
    try {
      await engine.describeScenario({ source, name: 'design' });
    } catch (error) {
      editor.say(error.message, 'fail');
      return false;
    }
    if (await run.busy(() => scenario.load({ source }, {}))) {
      editor.settled();
      // The design now runs below the editor: bring its controls and
      // timeline into view (the editor stays open above them).
      $('run-controls').scrollIntoView({ block: 'start' });
      return true;
    }
    // Why it cannot run, where the design is written.
    editor.say(`It does not run: ${run.statusText()}`, 'fail');
    return false;
  },
  // Keeps the editor's design in this browser, under its title.
  async 'save-draft'() {
    const source = editor.text();
    let title;
    try {
      title = (await engine.describeScenario({ source, name: 'design' })).title;
    } catch (error) {
      title = `Draft (not yet valid) ${new Date().toLocaleString('en')}`;
      editor.say(`Kept as a draft, but: ${error.message}`, 'fail');
    }
    const existing = editor.drafts().find((d) => d.title === title);
    if (existing && existing.source !== source
      && !window.confirm(`A draft called "${title}" exists. Replace it with this one? (Or change the title first.)`)) {
      return;
    }
    const drafts = editor.drafts().filter((d) => d.title !== title);
    drafts.unshift({ title, source, saved: Date.now() });
    if (keepDrafts(drafts)) {
      editor.settled();
      run.status(`Saved "${title}" in My scenarios.`);
    }
  },
  // Opens a draft in the editor and runs it.
  async 'open-draft'(target) {
    const draft = editor.drafts()[Number(target.dataset.draft)];
    if (!draft || !editor.open(draft.source)) return;
    try {
      await engine.describeScenario({ source: draft.source, name: 'design' });
      await run.busy(() => scenario.load({ source: draft.source }, {}));
    } catch {
      // The editor says what is wrong with it.
    }
  },
  // Deletes a draft, once the person confirms.
  'delete-draft'(target) {
    const drafts = editor.drafts();
    const i = Number(target.dataset.draft);
    const draft = drafts[i];
    if (!draft || !window.confirm(`Delete the draft "${draft.title}"? This cannot be undone.`)) return;
    drafts.splice(i, 1);
    keepDrafts(drafts);
  },
  // Closes the editor (the design shown stays).
  'close-editor'() {
    editor.close();
    document.body.classList.remove('drafting');
    $('edit-copy').focus();
  },
};
