// Types of the <replayground-scenario> element (js/embed.js): importing the
// module defines the element; these describe what a page may set on it.

/** A live, steppable scenario: a catalog id, a scenario file's URL, a packed file or an inline
 * `<script type="application/toml">` child, given by its attributes (see
 * `ReplaygroundScenarioAttributes` and the package's README). It is set up
 * when it is connected, and again when an attribute changes. */
export type ReplaygroundScenarioElement = HTMLElement;

/** The element's attributes, all strings as HTML gives them. */
export interface ReplaygroundScenarioAttributes {
  /** A catalog id (one of scenario, src, source or an inline file). */
  scenario?: string;
  /** The URL of a scenario file on the page's own origin. */
  src?: string;
  /** A scenario file packed: deflate-raw, then base64url. */
  source?: string;
  /** The interleaving Step and Run follow, e.g. "A6B3AB4". */
  schedule?: string;
  /** The scenario's parameters as JSON, e.g. '{"attempts":2}'. */
  params?: string;
  /** Which buttons to show: any of "step run reset". */
  controls?: string;
  /** How many steps to show when it loads. */
  step?: string;
  /** "light", "dark" or "auto". */
  theme?: 'light' | 'dark' | 'auto';
}

declare global {
  interface HTMLElementTagNameMap {
    'replayground-scenario': ReplaygroundScenarioElement;
  }
}
