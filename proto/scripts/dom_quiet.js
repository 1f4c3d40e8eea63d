(args) => new Promise((resolve) => {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  // A web component's changes are its shadow root's, which the document's observer does not
  // see: each open shadow root is observed too.
  const observe = (root) => {
    observer.observe(root, options);
    const all = (root.nodeType === 9 ? Document : DocumentFragment).prototype.querySelectorAll.call(root, '*');
    for (let i = 0; i < all.length; i += 1) if (all[i].shadowRoot) observe(all[i].shadowRoot);
  };
  try { observe(document); } catch (_) { observer.observe(document, options); }
  const check = () => {
    const now = performance.now();
    if (now - last >= args.quiet_ms) { observer.disconnect(); resolve(true); return; }
    if (now - start >= args.timeout_ms) { observer.disconnect(); resolve(false); return; }
    setTimeout(check, Math.max(10, Math.min(args.quiet_ms - (now - last), args.timeout_ms - (now - start))));
  };
  setTimeout(check, args.quiet_ms);
})
