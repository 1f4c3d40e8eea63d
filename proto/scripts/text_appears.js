(args) => new Promise((resolve) => {
  const wanted = String(args.text).replace(/\s+/g, ' ').trim();
  const has = () => {
    const body = document.body;
    return !!body && String(body.innerText || '').replace(/\s+/g, ' ').includes(wanted);
  };
  if (has()) { resolve(true); return; }
  const start = performance.now();
  let pending = null;
  const finish = (found) => { observer.disconnect(); clearInterval(ticker); clearTimeout(pending); resolve(found); };
  const look = () => {
    pending = null;
    if (has()) finish(true);
    else if (performance.now() - start >= args.timeout_ms) finish(false);
  };
  const observer = new MutationObserver(() => { if (!pending) pending = setTimeout(look, 100); });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const ticker = setInterval(look, 250);
})
