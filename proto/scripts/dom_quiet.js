(args) => new Promise((resolve) => {
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const check = () => {
    const now = performance.now();
    if (now - last >= args.quiet_ms) { observer.disconnect(); resolve(true); return; }
    if (now - start >= args.timeout_ms) { observer.disconnect(); resolve(false); return; }
    setTimeout(check, Math.max(10, Math.min(args.quiet_ms - (now - last), args.timeout_ms - (now - start))));
  };
  setTimeout(check, args.quiet_ms);
})
