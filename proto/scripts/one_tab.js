(() => {
  if (window !== window.top || window.__nanomuseOneTab) return;
  window.__nanomuseOneTab = true;
  const sameWindow = (target) => !target || ['_self', '_parent', '_top'].includes(target);
  // A browser that can hold a page's windows (the worker's says so before this runs) lets a
  // popup asked for with its size or place open as one: the page talks to it and it to its
  // opener (a related object's form, a sign-in), and the thread acts on it until it closes.
  // Only one a person's input asked for, as a browser's popup blocker would: a page that
  // opens windows by itself (an advertisement on load) does not take the thread away.
  const popupsOpen = window.__nanomusePopupsOpen === true;
  const open = window.open;
  window.open = function (url, name, features) {
    const popup = popupsOpen && typeof features === 'string' && features.trim() !== ''
      && !/\bno(opener|referrer)\b/i.test(features)
      && !!(navigator.userActivation && navigator.userActivation.isActive);
    if (popup) {
      // As a link's navigation does (below): the settle after the action that opened it waits
      // for the worker to make it the thread's page, which then takes the mark away.
      Object.defineProperty(window, '__nanomusePopupAt', {
        value: performance.now(), configurable: true, writable: true,
      });
      return open.call(window, url, name, features);
    }
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
  // A popup closing itself (a sign-in window once it answered its opener) is leaving too: its
  // end reaches the worker a moment after the call, and the settle must not call the popup
  // quiet in between, or the action's reply would miss that the thread is back on its opener.
  const markLeaving = () => Object.defineProperty(window, '__nanomuseLeavingAt', {
    value: performance.now(), configurable: true, writable: true,
  });
  if (window.opener) {
    const close = window.close;
    window.close = function () {
      markLeaving();
      return close.call(window);
    };
  }
  // A link, a form or a script about to replace this document says so here at once, while
  // its request may reach the network (and the worker's tracker) only later: `settle` reads
  // the mark so it does not call the page quiet in between. The page may still cancel it.
  if (window.navigation) {
    navigation.addEventListener('navigate', (event) => {
      if (event.destination.sameDocument || event.downloadRequest !== null) return;
      queueMicrotask(() => {
        if (!event.defaultPrevented) markLeaving();
      });
    });
  }
})();
