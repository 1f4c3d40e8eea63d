(() => {
  // A field whose value is a secret: a password field, one the page says holds one, one drawn
  // masked, or one that was a password field before (a "Show password" switch made it text:
  // remembered in the page for the document's life, by every script that asks).
  let secrets = window.__nanomuseSecrets;
  if (!(secrets instanceof WeakSet)) {
    secrets = new WeakSet();
    try {
      Object.defineProperty(window, '__nanomuseSecrets', { value: secrets, configurable: true });
    } catch (_) { /* remembered for this call only */ }
  }
  // Some sites fill autocomplete hints but switch a password field to type=text to show it.
  const SECRET_AUTOCOMPLETE = /\b(current-password|new-password|one-time-code)\b/i;
  return (el) => {
    if (el.type === 'password') {
      secrets.add(el);
      return true;
    }
    const masked = getComputedStyle(el).webkitTextSecurity;
    return secrets.has(el) || SECRET_AUTOCOMPLETE.test(el.autocomplete || '')
      || /pass(word|wd)|\bpwd\b/i.test(el.name + ' ' + el.id) || (!!masked && masked !== 'none');
  };
})()
