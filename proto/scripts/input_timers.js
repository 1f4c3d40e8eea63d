(() => {
  if (window !== window.top || window.__nanomuseInputTimers) return;
  // A page that waits for typing to pause (a search box's suggestions, an autocomplete, an
  // autosave) starts a short timer on each key, and only then asks its server; a click may
  // open its menu on a timer, or a sign-in window close itself a moment after it answered.
  // The step's settle would find the page quiet before any of them. The timers begun by input
  // (in a key's, an input's, a press's or a click's handlers, or in what they scheduled right
  // after: a framework's effect) are kept here until they fire or are cleared, for
  // FRAME_DRAWN to wait for. Longer ones (a toast's 5 s) are the page's own business, and so
  // are those a pointer's moves begin (a tooltip's).
  const LONGEST_MS = 1000;
  const AFTER_INPUT_MS = 100;
  const pending = new Map();
  let inputAt = -Infinity;
  // The generation of the kept timer whose handler runs (0: none). One begun there is kept too,
  // for a few generations: a debounce that re-arms itself for the rest of its wait (lodash's)
  // is waited for, a poll that typing started and that goes on for good is not.
  const GENERATIONS = 3;
  let firing = 0;
  const INPUT = ['keydown', 'keyup', 'input', 'compositionend', 'change', 'submit',
    'pointerdown', 'pointerup', 'mousedown', 'mouseup', 'click', 'touchstart', 'touchend'];
  for (const type of INPUT) {
    window.addEventListener(type, () => { inputAt = performance.now(); }, true);
  }
  const set = window.setTimeout;
  const clear = window.clearTimeout;
  const clearRepeating = window.clearInterval;
  window.setTimeout = function setTimeout(handler, delay, ...args) {
    const now = performance.now();
    const wait = Number(delay) || 0;
    const generation = firing > 0 ? firing + 1 : 1;
    if (typeof handler !== 'function' || wait > LONGEST_MS || generation > GENERATIONS
      || (firing === 0 && now - inputAt > AFTER_INPUT_MS)) {
      return set.call(window, handler, delay, ...args);
    }
    const id = set.call(window, function fired(...given) {
      pending.delete(id);
      const outer = firing;
      firing = generation;
      try {
        return handler.apply(this, given);
      } finally {
        firing = outer;
      }
    }, delay, ...args);
    pending.set(id, now + wait);
    return id;
  };
  // A request begun by such a timer's handler, or by input itself (the suggestions a pause
  // asks for): the browser tells of it a moment after the page made it, and a look that ends
  // meanwhile would find the network quiet. Marked here, for FRAME_DRAWN to say instead.
  let requestedAt = -Infinity;
  const requested = () => {
    const now = performance.now();
    if (firing > 0 || now - inputAt <= AFTER_INPUT_MS) requestedAt = now;
  };
  const pageFetch = window.fetch;
  if (typeof pageFetch === 'function') {
    window.fetch = function fetch(...args) {
      requested();
      return pageFetch.apply(this, args);
    };
  }
  const pageSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function send(...args) {
    requested();
    return pageSend.apply(this, args);
  };
  Object.defineProperty(window, '__nanomuseRequestedAt', { get: () => requestedAt });
  // Timeouts and intervals share their ids: either clears a timeout.
  window.clearTimeout = function clearTimeout(id) {
    pending.delete(id);
    return clear.call(window, id);
  };
  window.clearInterval = function clearInterval(id) {
    pending.delete(id);
    return clearRepeating.call(window, id);
  };
  // `(budget) => Promise`: settles once no such timer due within `budget` ms is left (at once
  // when there is none), those their handlers began included.
  Object.defineProperty(window, '__nanomuseInputTimers', {
    value: (budget) => new Promise((resolve) => {
      const until = performance.now() + budget;
      const look = () => {
        const now = performance.now();
        let left = -1;
        for (const due of pending.values()) {
          if (due <= until) left = Math.max(left, due - now);
        }
        // (One late past its time, as a busy page makes them, is still waited for, a while.)
        if (left < 0 || now > until + LONGEST_MS) resolve();
        // In the task after the last one's.
        else set.call(window, look, Math.max(left, 0) + 1);
      };
      look();
    }),
  });
})();
