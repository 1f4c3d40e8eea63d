() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    const leaving = window.__nanomuseLeavingAt;
    resolve(leaving !== undefined && performance.now() - leaving < 1000
      ? 'leaving' : document.readyState);
  };
  channel.port2.postMessage(null);
}))
