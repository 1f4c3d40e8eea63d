() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    const leaving = window.__nanomuseLeavingAt;
    resolve(leaving !== undefined && performance.now() - leaving < 1000
      ? 'leaving' : document.readyState);
  };
  // A transition under way (a menu fading out, a dialog sliding in) ends first: what leaves
  // stays in the document until it has. Endless or long ones (a spinner, a progress bar) are
  // the page's look, not a change to wait for. One that ends may start the next (Bootstrap's
  // dialog fades out, then its backdrop): looked for again in the frame after, within a second
  // in all.
  const started = performance.now();
  const untilEnded = () => {
    const budget = 1000 - (performance.now() - started);
    const ending = document.getAnimations().filter((animation) => {
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
}))
