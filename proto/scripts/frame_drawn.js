// Short timers the page began on input (a search box's pause before it asks its server, a menu
// that opens a moment after its click, see input_timers.js) fire first: what they start is
// what the input did. A request one of them began during this look is said ('requesting'):
// the browser may not have told of it yet.
() => ((lookStarted) => (typeof window.__nanomuseInputTimers === 'function'
  ? window.__nanomuseInputTimers(1000) : Promise.resolve()).then(() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    const recent = (mark) => mark !== undefined && performance.now() - mark < 1000;
    const requesting = (window.__nanomuseRequestedAt || -Infinity) >= lookStarted;
    resolve(recent(window.__nanomuseLeavingAt) || recent(window.__nanomusePopupAt)
      ? 'leaving' : requesting ? 'requesting' : document.readyState);
  };
  // A transition under way (a menu fading out, a dialog sliding in) ends first: what leaves
  // stays in the document until it has. Endless or long ones (a spinner, a progress bar) are
  // the page's look, not a change to wait for. One that ends may start the next (Bootstrap's
  // dialog fades out, then its backdrop): looked for again in the frame after, within a second
  // in all.
  // A web component's animations (Shoelace's menu, Ionic's popover) are its shadow root's,
  // which the document's list leaves out: each open shadow root is asked too.
  const animations = () => {
    const found = document.getAnimations();
    const visit = (root) => {
      const all = (root.nodeType === 9 ? Document : DocumentFragment).prototype.querySelectorAll.call(root, '*');
      for (let i = 0; i < all.length; i += 1) {
        const shadow = all[i].shadowRoot;
        if (shadow) {
          found.push(...shadow.getAnimations());
          visit(shadow);
        }
      }
    };
    try { visit(document); } catch (_) { /* the document's own, then */ }
    return found;
  };
  const started = performance.now();
  const untilEnded = () => {
    const budget = 1000 - (performance.now() - started);
    const ending = animations().filter((animation) => {
      if (animation.playState !== 'running' || !animation.effect) return false;
      const timing = animation.effect.getComputedTiming();
      const left = (timing.endTime - timing.localTime) / Math.abs(animation.playbackRate || 1);
      return left > 0 && left <= budget;
    });
    if (ending.length === 0) {
      channel.port2.postMessage(null);
      return;
    }
    Promise.all(ending.map((animation) => animation.finished.catch(() => null)))
      .then(() => requestAnimationFrame(untilEnded));
  };
  untilEnded();
}))))(performance.now())
