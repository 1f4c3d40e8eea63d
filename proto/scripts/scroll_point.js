// Where a wheel turn of `dy` scrolls what a person would turn it over: the middle of the view,
// where the box under it (or the page) can still move that way; else the middle of the part
// in view of the largest box that can (a sidebar that scrolls apart from the page: Shiny's,
// Streamlit's), so that what a listing counts below it is reached: null for the middle, else
// that box's middle in CSS px of the layout viewport (as a listing's points are).
(dy) => {
  const width = window.innerWidth;
  const height = window.innerHeight;
  const middle = null;
  const canMove = (node) => (dy > 0
    ? node.scrollTop + node.clientHeight < node.scrollHeight - 1 : node.scrollTop > 0);
  const scrollsApart = (node) => node.scrollHeight > node.clientHeight + 1
    && ['auto', 'scroll', 'overlay'].includes(getComputedStyle(node).overflowY) && canMove(node);
  const page = document.scrollingElement || document.documentElement;
  if (!dy || canMove(page)) return middle;
  for (let node = document.elementFromPoint(width / 2, height / 2); node && node !== page;
    node = node.parentNode || node.host) {
    if (node.nodeType === 1 && scrollsApart(node)) return middle;
  }
  let best = null;
  let bestArea = 0;
  for (const node of document.querySelectorAll('*')) {
    if (node.scrollHeight <= node.clientHeight + 1 || !scrollsApart(node)) continue;
    const rect = node.getBoundingClientRect();
    const left = Math.max(rect.left, 0);
    const right = Math.min(rect.right, width);
    const top = Math.max(rect.top, 0);
    const bottom = Math.min(rect.bottom, height);
    const area = Math.max(0, right - left) * Math.max(0, bottom - top);
    if (area > bestArea) {
      best = { x: (left + right) / 2, y: (top + bottom) / 2 };
      bestArea = area;
    }
  }
  return best || middle;
}
