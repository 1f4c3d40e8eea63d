(args) => new Promise((resolve) => {
  const wanted = String(args.text).replace(/\s+/g, ' ').trim();
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  const queryAll = (root) => (root.nodeType === 9 ? Document : DocumentFragment).prototype.querySelectorAll.call(root, '*');
  // The open shadow roots in `root`, at any depth: a web component's text is drawn from its
  // shadow root, which the body's innerText leaves out.
  const shadowRoots = (root, found) => {
    const all = queryAll(root);
    for (let i = 0; i < all.length; i += 1) {
      if (all[i].shadowRoot) {
        found.push(all[i].shadowRoot);
        shadowRoots(all[i].shadowRoot, found);
      }
    }
    return found;
  };
  const has = () => {
    const body = document.body;
    if (!body) return false;
    const texts = [body.innerText];
    try {
      for (const root of shadowRoots(document, [])) {
        for (const child of root.children) {
          if (!['style', 'script', 'template', 'link'].includes(child.localName)) texts.push(child.innerText);
        }
      }
    } catch (_) { /* the body's text, then */ }
    // What a field holds is shown too (an app's answer in a read-only box), a secret's never.
    try {
      const textless = ['password', 'hidden', 'checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'range', 'color'];
      for (const field of body.querySelectorAll('textarea, input')) {
        if (textless.includes(field.type)) continue;
        if (field.value && !secretField(field)) texts.push(field.value);
      }
    } catch (_) { /* the text alone */ }
    return texts.some((text) => String(text || '').replace(/\s+/g, ' ').includes(wanted));
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
  observer.observe(document, options);
  try { shadowRoots(document, []).forEach((root) => observer.observe(root, options)); } catch (_) { /* the document's */ }
  const ticker = setInterval(look, 250);
})
