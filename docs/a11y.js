// Two accessibility mends of mdBook's default theme, run on every page of
// the book (book.toml, additional-js), which axe-core would otherwise flag
// (tests/e2e/usability.test.mjs):
// - the sidebar's toggle is a <label> that carries aria-expanded, which only
//   some roles may carry: it is a button, so it says so;
// - a code block or a table wider than the page scrolls sideways, so the
//   keyboard must be able to reach it: each one that overflows joins the
//   tab order.
(() => {
  document.getElementById('sidebar-toggle')?.setAttribute('role', 'button');
  const reachable = () => {
    for (const region of document.querySelectorAll('pre > code, .table-wrapper')) {
      if (region.scrollWidth > region.clientWidth) region.tabIndex = 0;
      else region.removeAttribute('tabindex');
    }
  };
  reachable();
  window.addEventListener('resize', reachable);
})();
