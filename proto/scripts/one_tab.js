(() => {
  if (window !== window.top || window.__nanomuseOneTab) return;
  window.__nanomuseOneTab = true;
  const sameWindow = (target) => !target || ['_self', '_parent', '_top'].includes(target);
  window.open = function (url) {
    if (url !== undefined && url !== null && String(url) !== '') {
      location.href = new URL(String(url), location.href).href;
    }
    return window;
  };
  document.addEventListener('click', (event) => {
    const link = event.target && event.target.closest && event.target.closest('a[target], area[target]');
    if (link && !sameWindow(link.target)) link.target = '_self';
  }, true);
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form && !sameWindow(form.target)) form.target = '_self';
  }, true);
  // A link, a form or a script about to replace this document says so here at once, while
  // its request may reach the network (and the worker's tracker) only later: `settle` reads
  // the mark so it does not call the page quiet in between. The page may still cancel it.
  if (window.navigation) {
    navigation.addEventListener('navigate', (event) => {
      if (event.destination.sameDocument || event.downloadRequest !== null) return;
      queueMicrotask(() => {
        if (event.defaultPrevented) return;
        Object.defineProperty(window, '__nanomuseLeavingAt', {
          value: performance.now(), configurable: true, writable: true,
        });
      });
    });
  }
})();
