// Two accessibility mends of mdBook's default theme, run on every page of
// the book (book.toml, additional-js), which axe-core would otherwise flag
// (tests/e2e/usability.test.mjs):
// - the sidebar's toggle is a <label> that carries aria-expanded, which only
//   some roles may carry: it is a button, so it says so;
// - a code block wider than the page scrolls sideways, so the keyboard must
//   be able to reach it: each one that overflows joins the tab order.
(() => {
  document.getElementById('sidebar-toggle')?.setAttribute('role', 'button');
  const reachable = () => {
    for (const code of document.querySelectorAll('pre > code')) {
      if (code.scrollWidth > code.clientWidth) code.tabIndex = 0;
      else code.removeAttribute('tabindex');
    }
  };
  reachable();
  window.addEventListener('resize', reachable);
})();
