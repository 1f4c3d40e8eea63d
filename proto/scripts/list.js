(args) => {
  const listingId = String(args.listing_id);
  const maxListed = Number.isFinite(args.max) ? Math.max(0, Math.floor(args.max)) : 500;
  const viewWidth = window.innerWidth;
  const viewHeight = window.innerHeight;
  const LABEL_LIMIT = 80;
  const DIALOG_TEXT_LIMIT = 300;
  const ALERT_TEXT_LIMIT = 200;
  const ALERTS_SAID = 3;
  const VALUE_LIMIT = 40;
  const HREF_LIMIT = 500;

  // The prototypes' own methods, called on the nodes, so a page that replaces them on its
  // nodes (`document.querySelectorAll = …`) does not change what is listed.
  const QUERY_ALL = new Map([
    [9, Document.prototype.querySelectorAll],
    [11, DocumentFragment.prototype.querySelectorAll],
    [1, Element.prototype.querySelectorAll],
  ]);
  const allIn = (root, selector) => {
    try {
      return QUERY_ALL.get(root.nodeType).call(root, selector);
    } catch (_) {
      // A wrapped node (a polyfill's) is not the DOM's own: its own method, if any.
      try {
        const found = root.querySelectorAll(selector);
        return found && typeof found.length === 'number' ? found : [];
      } catch (_) {
        return [];
      }
    }
  };
  // What a field is described by when nothing names it, and what makes a handler's element a
  // container of controls rather than a control itself.
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, '
    + '[contenteditable=""], [contenteditable="true"], [role="button"], [role="link"], '
    + '[role="checkbox"], [role="radio"], [role="switch"], [role="tab"], [role="menuitem"], '
    + '[role="option"], [role="textbox"], [role="combobox"]';
  const FIELDS = 'input:not([type="hidden"]), select, textarea, [role="checkbox"], [role="radio"], '
    + '[role="switch"], [role="textbox"], [role="combobox"]';

  // What the page's style draws pressable only while the pointer is over it (bootstrap-
  // datepicker's days: `td.day:hover { cursor: pointer }`), which its computed style does not
  // say: the selectors of such rules less their `:hover`, read once a document from its style
  // sheets (another origin's cannot be read).
  const HOVER_RULES_MOST = 20000;
  const hoverPointers = new Map();
  const hoverPointerSelectors = (doc) => {
    if (hoverPointers.has(doc)) return hoverPointers.get(doc);
    const selectors = [];
    let read = 0;
    const readRules = (rules) => {
      for (let i = 0; i < rules.length && read < HOVER_RULES_MOST; i += 1, read += 1) {
        const rule = rules[i];
        const text = rule.selectorText;
        // (@media, @supports, @layer: their rules.)
        if (!text) {
          if (rule.cssRules) readRules(rule.cssRules);
          continue;
        }
        if (!text.includes(':hover') || !rule.style || rule.style.cursor !== 'pointer') continue;
        for (const part of text.split(',')) {
          const plain = part.includes(':hover') && part.replace(/:hover/g, '').trim();
          if (!plain || plain.startsWith('&')) continue;
          try {
            doc.documentElement.matches(plain);
            selectors.push(plain);
          } catch (_) { /* no selector without it (":not(:hover)") */ }
        }
      }
    };
    for (const sheet of itemsOf(doc.styleSheets)) {
      try { readRules(sheet.cssRules); } catch (_) { /* another origin's */ }
    }
    hoverPointers.set(doc, selectors.join(', '));
    return hoverPointers.get(doc);
  };
  const pointerUnderHover = (el) => {
    const selectors = el.ownerDocument ? hoverPointerSelectors(el.ownerDocument) : '';
    return !!selectors && el.matches(selectors);
  };
  // A Map, so role="constructor" does not find Object.prototype's.
  const ROLE_KINDS = new Map(Object.entries({
    button: 'button', link: 'link', checkbox: 'checkbox', radio: 'radio', tab: 'tab',
    menuitem: 'menuitem', menuitemcheckbox: 'menuitem', menuitemradio: 'menuitem',
    option: 'option', switch: 'switch', combobox: 'select', textbox: 'input', slider: 'slider',
  }));
  const BUTTON_INPUTS = new Set(['button', 'submit', 'reset', 'image']);
  // Never a control of its own, whatever its cursor: the page, its text runs, its parts.
  const POINTERLESS = new Set(['html', 'body', 'head', 'script', 'style', 'label', 'option', 'optgroup',
    'br', 'b', 'em', 'strong', 'small', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'path', 'g',
    'use', 'tbody', 'thead', 'tr', 'table', 'ul', 'ol', 'form', 'fieldset', 'legend', 'main', 'section',
    'article', 'nav', 'header', 'footer', 'aside']);
  const TOGGLE_KINDS = new Set(['checkbox', 'radio', 'switch']);
  // What is inside one of these is part of it: a finger pressing the inner span presses them.
  const CONTAINER_KINDS = new Set(['link', 'button', 'summary', 'tab', 'menuitem', 'option']);
  const CHOICE_KINDS = new Set(['menuitem', 'option']);
  // Fields are never swallowed by a container: the model has to be able to type into them.
  const isFieldKind = (kind) =>
    kind.startsWith('input') || TOGGLE_KINDS.has(kind) || ['select', 'textarea', 'editable', 'slider'].includes(kind);

  // Page text can hold lone UTF-16 surrogates, which are not valid JSON for the controller.
  // Zero-width spaces are no words: MUI's empty select shows one to keep its height.
  // Icon fonts draw from the private use areas: no words to a person.
  const collapse = (text) => String(text || '').replace(/\p{Cs}/gu, '\uFFFD')
    .replace(/[\u200B\u2060\uFEFF\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu, '')
    .replace(/\s+/g, ' ').trim();
  const cut = (text, limit) => {
    if (text.length <= limit) return text;
    // Cut by code points so an emoji is never split in half.
    return [...text.slice(0, limit * 2)].slice(0, limit - 1).join('').trimEnd() + '…';
  };
  // Words that are only numbers and marks (a slider's scale: "0 1M 2M", a unit's "%"), or
  // none: a field's values, not what it is for.
  const onlyNumbers = (words) => !words || words.split(' ').every((word) => /^[-+−]?[\d.,]*\d[\d.,]*\p{L}{0,2}$|^[^\p{L}\p{N}]+$/u.test(word));
  // The items of a DOM list: MooTools' Array.from ignores a mapping function.
  const itemsOf = (list) => {
    const items = [];
    for (let i = 0; i < list.length; i += 1) items.push(list[i]);
    return items;
  };
  const quoted = (text, limit) => '= ' + JSON.stringify(cut(text.replace(/\p{Cs}/gu, '\uFFFD'), limit));

  // An item drawn as pressable that says whether it is selected, with no role to say what it
  // is, is an option of a list the page draws (Ant Design's select: its options with roles are
  // in a list of no size kept for screen readers, the ones a person sees have none).
  const kindOf = (el) => {
    const kind = roleOrTagKind(el);
    return kind === 'clickable' && ['true', 'false'].includes(el.getAttribute('aria-selected')) ? 'option' : kind;
  };
  const roleOrTagKind = (el) => {
    if (standInFor.has(el)) return 'select';
    if (sliderFor.has(el)) return 'slider';
    if (stoodIn.has(el)) return null;
    const tag = el.localName;
    const role = (el.getAttribute('role') || '').trim().toLowerCase();
    if (tag === 'input') {
      const type = el.type;
      if (type === 'hidden') return null;
      if (type === 'checkbox' && role === 'switch') return 'switch';
      if (type === 'checkbox' || type === 'radio') return type;
      if (BUTTON_INPUTS.has(type)) return 'button';
      // A dropdown the page draws itself, reached through a field that takes no typing
      // (Quasar's select): chosen from, like a <select>.
      if (role === 'combobox' && el.readOnly) return 'select';
      return type === 'text' ? 'input' : 'input:' + type;
    }
    if (tag === 'select') return 'select';
    if (tag === 'textarea') return 'textarea';
    if (ROLE_KINDS.has(role)) {
      return role === 'textbox' && el.getAttribute('aria-multiline') === 'true' ? 'textarea' : ROLE_KINDS.get(role);
    }
    if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return 'link';
    // A button that opens a list box to choose from (Dash's dropdown, Headless UI's Listbox)
    // is a dropdown the page draws, as a role=combobox is.
    if (tag === 'button') return el.getAttribute('aria-haspopup') === 'listbox' ? 'select' : 'button';
    if (tag === 'summary') return 'summary';
    // Only the editing host: everything inside an editor is editable too.
    if (el.hasAttribute('contenteditable') && el.isContentEditable) {
      return el.parentElement && el.parentElement.isContentEditable ? null : 'editable';
    }
    // A handler on <body> or <html> catches every click on the page; it says nothing. Whether
    // a handler's element is a control or a framework's container is decided by its place
    // (see `delegates`). One written in the page's markup makes a control; one a script set
    // (Dash sets one on every component with an id, to count its clicks) only where the page
    // draws it as pressable, as one added with addEventListener (below).
    if (typeof el.onclick === 'function' && tag !== 'body' && tag !== 'html'
      && (el.hasAttribute('onclick') || getComputedStyle(el).cursor === 'pointer')) {
      return 'clickable';
    }
    // Focusable and drawn as pressable: a control built from a <div>.
    const tabindex = el.getAttribute('tabindex');
    // (Or focusable by script only, as a menu's items are: Vuetify's list items.)
    if (tabindex !== null && Number.isInteger(Number(tabindex)) && getComputedStyle(el).cursor === 'pointer') {
      return 'clickable';
    }
    // Drawn as pressable where what holds it is not: an item of a widget whose handler the
    // page keeps elsewhere (a jQuery plugin's menu item, a link with no address, an icon to
    // remove a tag). What holds controls of its own is a container (see `delegates`). (Or
    // drawn so only once the pointer is over it: bootstrap-datepicker's days.)
    if (!POINTERLESS.has(tag) && el.parentElement
      && (getComputedStyle(el).cursor === 'pointer' || pointerUnderHover(el))
      && getComputedStyle(el.parentElement).cursor !== 'pointer' && !pointerUnderHover(el.parentElement)) {
      return 'clickable';
    }
    // Said to be enabled or not, which only a control is: a calendar's days drawn as table
    // cells with aria-disabled, their handler kept by the framework at its root (Dash's date
    // picker).
    if (!POINTERLESS.has(tag) && (!role || role === 'gridcell') && el.hasAttribute('aria-disabled')) {
      return 'clickable';
    }
    return null;
  };

  // A handler on an element that holds controls of its own, or that spans (almost) the whole
  // view, is a framework delegating events (React's root container, Vue's app, a layout
  // wrapper): what a person presses is inside it.
  const delegates = (el, rect) =>
    holdsControls(el, 0) || (rect.width >= 0.9 * viewWidth && rect.height >= 0.9 * viewHeight);
  // Controls in `root`, or in the open shadow root of it or of an element in it: a design
  // system's button (JupyterLab's <jp-button>) draws a native <button> in its shadow root,
  // which is what is listed, not the element that hosts it nor the toolbar item around that.
  const holdsControls = (root, depth) => {
    // A slider's thumb too: the track drawn pressable around it (Ant Design's) is moved by it.
    if (allIn(root, CONTROLS + ', [role="slider"]').length > 0) return true;
    if (depth > 3) return false;
    const hosts = itemsOf(allIn(root, '*')).filter((node) => node.shadowRoot);
    if (root.shadowRoot) hosts.push(root);
    return hosts.some((host) => holdsControls(host.shadowRoot, depth + 1));
  };

  const hasArea = (rect) => rect.width > 0 && rect.height > 0;
  const visibleByCss = (el) => {
    // checkVisibility also sees an ancestor's opacity: 0; older WebViews lack it.
    if (el.checkVisibility) {
      return el.checkVisibility({
        checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true,
      });
    }
    const style = getComputedStyle(el);
    return style.visibility === 'visible' && style.display !== 'none' && style.opacity !== '0';
  };
  const overlaps = (box, clip) =>
    box.right > clip.left && box.left < clip.right && box.bottom > clip.top && box.top < clip.bottom;

  // A code editor (CodeMirror 5, Ace, Monaco) draws its text itself and takes the keyboard
  // through a <textarea> no one sees: transparent, a pixel or two in size, or inside a box
  // too small to show it. Such a field is listed as the editor it stands for: the editor's box
  // (where a finger presses), the editor's text as its value; typing focuses the field.
  const hiddenByItsBox = (field, rect) => {
    // Not laid out, or hidden outright (reCAPTCHA's answer field, a display: none original):
    // no stand-in for anything.
    if ((rect.width === 0 && rect.height === 0) || !transparentOnly(field)) return false;
    if (rect.width <= 2 || rect.height <= 2 || !visibleByCss(field)) return true;
    if (getComputedStyle(field).color === 'rgba(0, 0, 0, 0)') return true;
    // A box a few pixels each way (not a collapsed panel, which keeps its width).
    for (let node = field.parentElement, depth = 0; node && depth < 2; node = node.parentElement, depth += 1) {
      if (getComputedStyle(node).overflow === 'visible') continue;
      const clip = node.getBoundingClientRect();
      if (clip.width <= 4 && clip.height <= 4) return true;
    }
    return false;
  };
  const editorOf = (field) => {
    if (field.localName !== 'textarea' || !hiddenByItsBox(field, field.getBoundingClientRect())) return null;
    let node = field.parentElement;
    for (let depth = 0; node && depth < 5 && node.localName !== 'body'; depth += 1, node = node.parentElement) {
      const box = node.getBoundingClientRect();
      if (box.width >= 40 && box.height >= 12 && visibleByCss(node)) {
        // A box holding other fields is a form, not this field's editor.
        return allIn(node, FIELDS).length === 1 ? node : null;
      }
    }
    return null;
  };
  const editors = new Map();
  // The start of what an editor shows, its lines one after another, less what it draws beside
  // them: line numbers, in what editors hide from screen readers (Ace) or name their gutter
  // (CodeMirror, Monaco). An editor that hides all of its lines (Monaco, which speaks them
  // through its field) is read without the first rule.
  const GUTTER = /gutter|line-?numbers?/i;
  const editorText = (editor) => readText(editor, true) || readText(editor, false);
  const readText = (editor, skipHidden) => {
    const walker = editor.ownerDocument.createTreeWalker(editor, NodeFilter.SHOW_TEXT);
    const drawn = editor.getBoundingClientRect();
    const beside = (el) => {
      for (let node = el; node && node !== editor; node = node.parentElement) {
        if (GUTTER.test(String(node.className))) return true;
        if (skipHidden && node.getAttribute('aria-hidden') === 'true') return true;
      }
      return false;
    };
    let text = '';
    let line = null;
    for (let node = walker.nextNode(); node && text.length <= 2 * VALUE_LIMIT; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || parent.closest('textarea, script, style') || beside(parent)) continue;
      if (parent.checkVisibility && !parent.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })) continue;
      // Text an editor lays out to measure its font is placed out of its box.
      if (!overlaps(parent.getBoundingClientRect(), drawn)) continue;
      let block = parent;
      while (block !== editor && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
      text += (text && block !== line ? ' ' : '') + node.data;
      line = block;
    }
    // An empty line holds a zero-width space (CodeMirror's), to keep its height.
    return collapse(text.replace(/[\u200b\ufeff]/g, ''));
  };

  // Each container listed, and its kind.
  const containers = new Map();
  const insideContainer = (el, kinds) => {
    // Walks up through shadow roots to their hosts, so a button's shadow content is inside it.
    for (let node = el.parentNode; node; node = node.parentNode || node.host) {
      if (containers.has(node) && (!kinds || kinds.has(containers.get(node)))) return true;
    }
    return false;
  };

  const inView = [];
  const standIns = new Set();
  let above = 0;
  let below = 0;

  // Drawn nowhere though it has a box: clipped to nothing, as Bootstrap's .btn-check radios
  // are (placed over the first button of their group, each behind its own <label>).
  const clippedAway = (el) => {
    const style = getComputedStyle(el);
    return (style.clip === 'rect(0px, 0px, 0px, 0px)' && ['absolute', 'fixed'].includes(style.position))
      || /^inset\((50|100)%/.test(style.clipPath);
  };
  // Clipped away for screen readers, itself or a box around it below `root` (a table's visually
  // hidden header, a spinner's "Loading…").
  const readersOnlyBelow = (node, root) => {
    for (let up = node; up && up !== root; up = up.parentElement) if (clippedAway(up)) return true;
    return false;
  };
  // Inside a box clipped away to nothing, a level or two out: for screen readers only (React
  // Aria's VisuallyHidden: Streamlit's checkboxes, radios and sliders).
  const clippedWithin = (el) => {
    for (let node = el.parentElement, depth = 0; node && depth < 2; node = node.parentElement, depth += 1) {
      if (clippedAway(node)) return true;
    }
    return false;
  };
  // Drawn except for its opacity: a styled checkbox laid transparent over what the page draws
  // for it (dijit's), which is where a finger presses.
  const transparentOnly = (el) =>
    !!el.checkVisibility && el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });

  // A <label> next to `el` that is not tied to a field (none inside it, no `for`, or a `for`
  // naming no field a browser labels: the hidden input a widget keeps its value in, its own
  // field drawn beside it past that input, flatpickr's altInput as Panel draws it).
  const untiedLabelBeside = (el) => {
    const pastHidden = (node, step) => {
      while (node && node.localName === 'input' && node.type === 'hidden') node = node[step];
      return node;
    };
    return [pastHidden(el.previousElementSibling, 'previousElementSibling'), pastHidden(el.nextElementSibling, 'nextElementSibling')]
      .find((sibling) => sibling && sibling.localName === 'label' && (!sibling.hasAttribute('for') || !sibling.control)
        && allIn(sibling, FIELDS).length === 0);
  };
  // A field a person does not see: no box, hidden, or clipped to nothing (a native <select> a
  // widget hid to draw its own, Select2's).
  const unseen = (field) => {
    const rect = field.getBoundingClientRect();
    return rect.width <= 2 || rect.height <= 2 || !visibleByCss(field) || clippedAway(field);
  };
  // The fields seen in `box` other than `field` and what is inside it (an editor's own hidden
  // field is).
  const otherFields = (box, field) => itemsOf(allIn(box, FIELDS))
    .filter((other) => !field.contains(other) && !unseen(other));
  // The nearest box drawn around a field hidden for screen readers, however small (a slider's
  // thumb), that holds no other control and is not hidden with it.
  const drawnAround = (field) => {
    for (let node = field.parentElement, depth = 0; node && depth < 4 && node.localName !== 'body';
      node = node.parentElement, depth += 1) {
      if (allIn(node, CONTROLS).length > 1) return null;
      const rect = node.getBoundingClientRect();
      if (rect.width >= 6 && rect.height >= 6 && visibleByCss(node) && !clippedAway(node)) return node;
    }
    return null;
  };
  // The nearest box drawn around a field, a few levels out at most, that holds no other control.
  const boxAround = (field) => {
    let node = field.parentElement;
    for (let depth = 0; node && depth < 4 && node.localName !== 'body'; depth += 1, node = node.parentElement) {
      if (allIn(node, CONTROLS).length > 1) return null;
      const rect = node.getBoundingClientRect();
      if (rect.width >= 20 && rect.height >= 10 && visibleByCss(node)) return node;
    }
    return null;
  };

  // Web components that are toggles themselves (Ionic's toggle and checkbox: role=switch on
  // the host) and keep a native one in their shadow root for a form: the host is the one
  // listed, the one a person sees named and pressed.
  const toggleHosts = new Set();
  const insideToggleHost = (el) => {
    for (let root = el.getRootNode(); root && root.host; root = root.host.getRootNode()) {
      if (toggleHosts.has(root.host)) return true;
    }
    return false;
  };

  // What is inside a dropdown the page draws (Vuetify's: its own field for a filter, its
  // arrow) is part of it: typing into the dropdown chooses.
  const drawnSelects = new Set();
  // A native <select> the page hid and drew anew as a plain box beside it (Select2 3's link in
  // a box, Chosen's), the box showing the option chosen: the box is the dropdown, named by the
  // select's label. (Boxes that say they are one, role=combobox, are listed as such anyway.)
  const standInFor = new Map();
  // A slider's handle drawn for a hidden field (see below), and the fields stood in for so.
  const sliderFor = new Map();
  const stoodIn = new Set();
  const findStandIns = (root) => {
    for (const select of itemsOf(allIn(root, 'select'))) {
      if (!unseen(select) || select.multiple) continue;
      const chosen = select.selectedOptions && select.selectedOptions[0];
      const shown = chosen && collapse(chosen.text);
      if (!shown) continue;
      const box = [select.previousElementSibling, select.nextElementSibling].find((sibling) => sibling
        && !kindOf(sibling) && hasArea(sibling.getBoundingClientRect()) && visibleByCss(sibling)
        && !clippedAway(sibling)
        && itemsOf(allIn(sibling, 'input, select, textarea, [role="combobox"], [role="listbox"]')).every(unseen)
        && itemsOf(allIn(sibling, CONTROLS)).filter((control) => !unseen(control)).length <= 1
        && collapse(sibling.innerText).includes(shown));
      if (box) standInFor.set(box, select);
    }
    // A dropdown drawn over a hidden field that keeps its value (Select2 3's over an
    // <input type="hidden">: Flask-Admin's fields that look their options up as one types),
    // told by the focus catcher it holds for the keyboard, which says it opens a popup.
    for (const hidden of itemsOf(allIn(root, 'input[type="hidden"][id]'))) {
      const box = [hidden.previousElementSibling, hidden.nextElementSibling].find((sibling) => sibling
        && !kindOf(sibling) && !standInFor.has(sibling) && hasArea(sibling.getBoundingClientRect())
        && visibleByCss(sibling) && !clippedAway(sibling)
        && itemsOf(allIn(sibling, '[aria-haspopup]')).some((catcher) => unseen(catcher))
        && itemsOf(allIn(sibling, 'input, select, textarea, [role="combobox"], [role="listbox"]')).every(unseen)
        && itemsOf(allIn(sibling, CONTROLS)).filter((control) => !unseen(control)).length <= 1);
      if (box) standInFor.set(box, hidden);
    }
    // A slider drawn beside the field it keeps its value in, that field read-only and hidden
    // (no room inside its border, under everything: ion.rangeSlider, Shiny's sliders), a box
    // of numbers (its scale, its value) around a handle or two drawn pressable: each handle
    // is the slider, named by the field's label, its value the field's. Pressed, it takes the
    // keyboard's arrows.
    for (const field of itemsOf(allIn(root, 'input'))) {
      if (!field.readOnly || !(unseen(field) || (field.clientWidth === 0 && field.clientHeight === 0))) continue;
      const box = [field.previousElementSibling, field.nextElementSibling].find((sibling) => sibling
        && !kindOf(sibling) && hasArea(sibling.getBoundingClientRect()) && visibleByCss(sibling)
        && onlyNumbers(collapse(sibling.innerText))
        && itemsOf(allIn(sibling, 'input, select, textarea, [role="slider"]')).length === 0);
      const handles = box ? itemsOf(allIn(box, '*')).filter((node) => getComputedStyle(node).cursor === 'pointer'
        && getComputedStyle(node.parentElement).cursor !== 'pointer' && hasArea(node.getBoundingClientRect())) : [];
      if (handles.length < 1 || handles.length > 2) continue;
      for (const handle of handles) sliderFor.set(handle, field);
      stoodIn.add(field);
    }
  };
  // Choices.js marks the option the keys are on aria-selected, chosen or not (Panel's
  // MultiChoice read "Insurance" (selected) after Express was chosen): where the dropdown
  // drawn around it keeps a native <select>, that one says what is chosen.
  const onlyUnderTheKeys = (option) => {
    const box = drawnSelects.size > 0 && drawnSelectAround(option);
    const native = box && box.querySelector('select');
    if (!native) return false;
    const chosen = itemsOf(native.selectedOptions).flatMap((chosenOption) => [chosenOption.value, collapse(chosenOption.text)]);
    // (A chosen item's words less its remover's.)
    const words = [...option.childNodes].filter((node) => node.nodeType === 3 || !node.matches('button, [role="button"]'))
      .map((node) => node.textContent).join(' ');
    return !chosen.includes(option.getAttribute('data-value')) && !chosen.includes(collapse(words));
  };
  const drawnSelectAround = (el) => {
    for (let node = el.parentNode; node; node = node.parentNode || node.host) {
      if (drawnSelects.has(node)) return node;
    }
    return null;
  };

  // A combobox's own toggle (React Aria's "Open": Streamlit's selects), out of the tab order
  // beside the field it opens the list of, which pressing or typing into the field opens too:
  // one dropdown, listed once, as its field.
  const comboboxToggle = (el) => {
    if (el.getAttribute('tabindex') !== '-1' || !(el.hasAttribute('aria-haspopup') || el.hasAttribute('aria-expanded'))) return false;
    // (Beside it: in a box whose one field seen is that combobox, not in a form of other
    // fields and dropdowns, Dash's, each a button out of the tab order.)
    for (let node = el.parentElement, depth = 0; node && depth < 2; node = node.parentElement, depth += 1) {
      const fields = itemsOf(allIn(node, FIELDS)).filter((field) => !unseen(field));
      if (fields.length > 1) return false;
      if (fields.length === 1 && fields[0].matches('input[role="combobox"], [role="combobox"] input')) return true;
    }
    return false;
  };
  // An expander drawn twice (Swagger UI's operation: its summary, then an arrow out of the tab
  // order that opens the same): the arrow, a mark with no words of its own, named only with
  // words its focusable twin beside it shows, is that one. (A roving tab order's items, a
  // tree's, each out of it but one, have words of their own.)
  const expanderTwin = (el) => {
    if (el.getAttribute('tabindex') !== '-1' || !el.hasAttribute('aria-expanded') || collapse(el.innerText)) return false;
    const words = (text) => collapse(text).toLowerCase().split(' ').filter(Boolean);
    const own = words(el.getAttribute('aria-label') || el.getAttribute('title') || '');
    if (own.length === 0) return false;
    const parent = el.parentElement;
    return !!parent && itemsOf(allIn(parent, '[aria-expanded]')).some((twin) => twin !== el
      && twin.getAttribute('tabindex') !== '-1' && !twin.contains(el)
      && twin.getAttribute('aria-expanded') === el.getAttribute('aria-expanded')
      && own.every((word) => words(twin.innerText).includes(word)));
  };
  const consider = (el, kind, frame) => {
    if (!isFieldKind(kind) && insideContainer(el)) return;
    // What a dropdown the page draws holds is its own (its field, its value); only its
    // options, once it is open, are chosen from (Choices.js keeps its list inside its box).
    const around = drawnSelects.size > 0 && drawnSelectAround(el);
    if (around && !(CHOICE_KINDS.has(kind) && around.getAttribute('aria-expanded') === 'true')) return;
    if (kind === 'select' && !['input', 'select'].includes(el.localName)) drawnSelects.add(el);
    if (TOGGLE_KINDS.has(kind)) {
      if (insideToggleHost(el)) return;
      if (el.shadowRoot) toggleHosts.add(el);
    }
    // A tick drawn inside an option or a menu item is the item's own mark (Dash's dropdown, a
    // multi-select): the item says whether it is chosen, and pressing one presses the other.
    if (TOGGLE_KINDS.has(kind) && insideContainer(el, CHOICE_KINDS)) return;
    if (comboboxToggle(el) || expanderTwin(el)) return;
    let target = el;
    let rect = el.getBoundingClientRect();
    if (kind === 'clickable' && delegates(el, rect)) return;
    const editor = kind === 'textarea' && editorOf(el);
    // (What React Aria hides for screen readers is a native input, or a select beside the one
    // it draws: Streamlit's calendar's month and year.)
    const forReaders = !editor && ['input', 'select'].includes(el.localName) && clippedWithin(el);
    if (editor) {
      target = editor;
      rect = editor.getBoundingClientRect();
      editors.set(el, editor);
    } else if (!hasArea(rect) || !visibleByCss(el) || clippedAway(el) || forReaders) {
      const toggle = TOGGLE_KINDS.has(kind);
      // Styled checkboxes and file pickers hide the real input and draw its <label>, which is
      // what a finger presses; pressing it toggles the input, or opens its file chooser. A
      // dropdown the page draws (Quasar's) takes the keyboard through a field no one sees
      // inside the <label> it draws. Any control made see-through or clipped away by its own
      // style is drawn by its label (Ionic's select: a clipped button inside the <label> that
      // shows the choice; its floating-label field, transparent until it has the focus).
      // (Not a native <select> the page hid and drew anew beside it: Select2's, Tom Select's
      // copy is the one listed.)
      const native = el.localName === 'select';
      const drawnByLabel = !native && (toggle || kind === 'input:file' || kind === 'select'
        || (hasArea(rect) && transparentOnly(el)) || forReaders);
      // A toggle's label beside it, tied by the page's script rather than by `for` (Fomantic's
      // checkbox, its label drawn over the transparent input), stands in too.
      let label = drawnByLabel && ((el.labels && el.labels[0]) || (toggle && untiedLabelBeside(el)));
      // A dropdown's field inside the box the page draws for it, its label apart (Ant Design's
      // select, its form's label above it): the box is what a finger presses, not the label.
      if (kind === 'select' && el.localName === 'input' && !(label && label.contains(el))) {
        label = boxAround(el) || label;
      }
      // One hidden for screen readers and labelled by nothing drawn (a slider's input, labelled
      // by aria-label): the box drawn around it, its thumb.
      if (!label && forReaders && !native) label = drawnAround(el);
      const labelRect = label && !standIns.has(label) && label.getBoundingClientRect();
      // (A label clipped away as its field is, for screen readers only, stands in for nothing:
      // Select2's focus catcher's.)
      if (labelRect && hasArea(labelRect) && visibleByCss(label) && !clippedAway(label) && !clippedWithin(label)) {
        rect = labelRect;
        target = label;
        standIns.add(label);
      } else if (forReaders || !((toggle || ['input:file', 'input:range'].includes(kind)
        || (native && rect.width >= 10 && rect.height >= 10 && !clippedAway(el))) && hasArea(rect) && transparentOnly(el))) {
        // (A native <select> laid see-through over a box the page draws is the control a finger
        // presses, as a range laid over the track the page draws is (Angular Material's
        // slider); one hidden to a sliver or clipped away stands behind a widget's own copy.)
        return;
      }
    }
    if (CONTAINER_KINDS.has(kind)) containers.set(el, kind);
    const box = {
      left: rect.left + frame.x, top: rect.top + frame.y,
      right: rect.right + frame.x, bottom: rect.bottom + frame.y,
    };
    // Scrolled out of sight inside its frame: neither in view nor a scroll of the page away.
    if (frame.clip && !overlaps(box, frame.clip)) return;
    // Above and below count what a scroll of the page brings into view: not what is placed
    // beside it (visually hidden text at left: -9999px), nor above the page's own top (a skip
    // link that waits for the keyboard's focus at top: -999px).
    if (box.right <= 0 || box.left >= viewWidth) return;
    if (box.bottom <= 0) {
      if (frame.clip || box.bottom + scrolledAbove(target) > 0) above += 1;
    } else if (box.top >= viewHeight) below += 1;
    else if (!clippedByABox(target, rect)) inView.push({ el, target, kind, box, clip: frame.clip });
  };
  // Drawn wholly outside a box that clips what overflows it and that no one can scroll
  // (overflow: hidden or clip): a tab strip's tabs past its end, a carousel's other slides.
  // No one sees them, so they are not listed. What escapes the box (a menu positioned outside
  // its clipping parent) is still hit where it is drawn, and stays.
  const clipOf = new Map();
  const clippedByABox = (el, rect) => {
    const body = el.ownerDocument.body;
    for (let node = el.parentNode; node && node !== body && node.nodeType !== 9; node = node.parentNode || node.host) {
      if (node.nodeType !== 1) continue;
      let clip = clipOf.get(node);
      if (clip === undefined) {
        const style = getComputedStyle(node);
        const x = /hidden|clip/.test(style.overflowX);
        const y = /hidden|clip/.test(style.overflowY);
        // (A box of `display: contents` has no box to clip with.)
        clip = (x || y) && style.display !== 'contents' ? { x, y, rect: node.getBoundingClientRect() } : null;
        clipOf.set(node, clip);
      }
      if (!clip) continue;
      const outside = (clip.x && (rect.right <= clip.rect.left || rect.left >= clip.rect.right))
        || (clip.y && (rect.bottom <= clip.rect.top || rect.top >= clip.rect.bottom));
      if (!outside) continue;
      const root = el.getRootNode();
      const hit = root.elementFromPoint && root.elementFromPoint((rect.left + rect.right) / 2, (rect.top + rect.bottom) / 2);
      return !(hit && (hit === el || el.contains(hit)));
    }
    return false;
  };
  // How far up the scrollers holding `el` (the page's own one included) can still go.
  const scrolledAbove = (el) => {
    let scrolled = 0;
    for (let node = el; node; node = node.parentNode || node.host) {
      if (node.nodeType === 1) scrolled += node.scrollTop;
    }
    return Math.max(scrolled, window.scrollY);
  };

  // A same-origin frame's elements, placed in the top page's coordinates and clipped by it.
  const frameInside = (iframe, outer) => {
    let doc = null;
    try { doc = iframe.contentDocument; } catch (_) { return null; }
    const inner = doc && doc.defaultView;
    if (!inner || !doc.documentElement) return null;
    const rect = iframe.getBoundingClientRect();
    if (!hasArea(rect) || !visibleByCss(iframe)) return null;
    const style = getComputedStyle(iframe);
    const x = outer.x + rect.left + iframe.clientLeft + parseFloat(style.paddingLeft);
    const y = outer.y + rect.top + iframe.clientTop + parseFloat(style.paddingTop);
    let clip = { left: x, top: y, right: x + inner.innerWidth, bottom: y + inner.innerHeight };
    if (outer.clip) {
      clip = {
        left: Math.max(clip.left, outer.clip.left), top: Math.max(clip.top, outer.clip.top),
        right: Math.min(clip.right, outer.clip.right), bottom: Math.min(clip.bottom, outer.clip.bottom),
      };
    }
    return { doc, x, y, clip };
  };

  // The open shadow roots seen, where popups are looked for too (Bokeh's, Panel's).
  const shadowRoots = [];
  // How far the page and every box in it are scrolled, all told: a scroll moves one of them.
  let scrolledInAll = 0;
  const visit = (root, frame) => {
    try { findStandIns(root); } catch (_) { /* none */ }
    const all = allIn(root, '*');
    for (let i = 0; i < all.length; i += 1) {
      const el = all[i];
      scrolledInAll += el.scrollTop || 0;
      // One element the page made unreadable is left out, not the page.
      try {
        const kind = kindOf(el);
        if (kind) consider(el, kind, frame);
      } catch (_) { /* left out */ }
      try {
        if (el.shadowRoot) {
          shadowRoots.push(el.shadowRoot);
          visit(el.shadowRoot, frame);
        }
        if (el.localName === 'iframe' || el.localName === 'frame') {
          const inner = frameInside(el, frame);
          if (inner) visit(inner.doc, inner);
        }
      } catch (_) { /* left out */ }
    }
  };
  visit(document, { x: 0, y: 0, clip: null });

  // Reading order: top to bottom, and left to right within a line. A line is what begins
  // above the middle of its first (highest) element: tops a few pixels apart (baseline
  // alignment, borders), and a row of controls of several heights centred on one line (a
  // toolbar, Mesop's row of Angular Material fields) — not past 24 px, so that a tall one (a
  // text area) does not take the lines beside it.
  const LINE_SLACK = 5;
  const LINE_MOST = 24;
  inView.sort((a, b) => a.box.top - b.box.top);
  const byLines = [];
  for (let start = 0; start < inView.length;) {
    const first = inView[start].box;
    const reach = Math.max(LINE_SLACK, Math.min((first.bottom - first.top) / 2, LINE_MOST));
    let end = start;
    while (end < inView.length && inView[end].box.top - first.top <= reach) end += 1;
    byLines.push(...inView.slice(start, end).sort((a, b) => a.box.left - b.box.left));
    start = end;
  }
  // The open popups: a dropdown's list of options, a menu, a dialog, a date picker's calendar,
  // each laid over the page by its own box (or one a few levels out) taken out of the flow;
  // with that box and where it lies.
  const POPUPS = '[role="listbox"], [role="menu"], [role="tree"], [role="grid"], [role="dialog"], '
    + '[role="tooltip"], .dropdown-menu';
  const floating = (el) => {
    for (let node = el, depth = 0; node && node.nodeType === 1 && depth < 3; node = node.parentElement, depth += 1) {
      if (['absolute', 'fixed'].includes(getComputedStyle(node).position)) return node;
    }
    return null;
  };
  let popups = [];
  try {
    popups = [document, ...shadowRoots].flatMap((root) => itemsOf(allIn(root, POPUPS))).map((popup) => {
      const box = floating(popup);
      const rect = box && visibleByCss(popup) && box.getBoundingClientRect();
      return rect && hasArea(rect) ? { popup, box, rect } : null;
    }).filter(Boolean);
  } catch (_) { /* none read */ }
  const openPopups = new Set(popups.map(({ popup }) => popup));
  // Regions side by side (a sidebar beside a form: Django's admin) are read one after the
  // other, as a person reads them, not line by line across both: each of the page's landmarks
  // (header, nav, main, aside, footer, search, or their roles) keeps its elements together,
  // where the first of them comes in reading order, and the landmarks within it likewise. So
  // does an open popup, whose items would otherwise be read between the lines of what it
  // floats over (Bootstrap's dropdown menu over a table).
  const LANDMARK_TAGS = new Set(['header', 'footer', 'nav', 'aside', 'main', 'search']);
  const LANDMARK_ROLES = new Set(['banner', 'contentinfo', 'navigation', 'complementary', 'main', 'search', 'region']);
  // Boxes laid side by side without a landmark's name (Django's index: its apps beside "Recent
  // actions"; a card beside a card) are regions too: a box at least two lines tall with a box
  // of the same parent beside it, left or right, as tall over the same lines.
  const COLUMN_HEIGHT = 60;
  const columns = new Map();
  const isColumn = (node) => {
    if (columns.has(node)) return columns.get(node);
    let column = false;
    const parent = node.parentElement;
    if (parent && parent.children.length <= 12) {
      const rect = node.getBoundingClientRect();
      column = rect.height >= COLUMN_HEIGHT && itemsOf(parent.children).some((other) => {
        if (other === node) return false;
        const beside = other.getBoundingClientRect();
        return (beside.left >= rect.right || beside.right <= rect.left)
          && Math.min(beside.bottom, rect.bottom) - Math.max(beside.top, rect.top) >= COLUMN_HEIGHT;
      });
    }
    columns.set(node, column);
    return column;
  };
  const isLandmark = (node) => {
    if (openPopups.has(node) || isColumn(node)) return true;
    const role = (node.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (!role) return LANDMARK_TAGS.has(node.localName);
    // A region is one only when named (as a screen reader takes it).
    return LANDMARK_ROLES.has(role)
      && (role !== 'region' || node.hasAttribute('aria-label') || node.hasAttribute('aria-labelledby'));
  };
  // The landmarks around `el`, outermost first, through shadow roots and frames.
  const landmarksAround = (el) => {
    const found = [];
    let node = el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
    for (let depth = 0; node && depth < 256; depth += 1) {
      if (node.nodeType === 1 && isLandmark(node)) found.push(node);
      const up = node.parentElement || (node.getRootNode && node.getRootNode().host);
      if (up) {
        node = up;
      } else {
        try { node = node.ownerDocument.defaultView.frameElement; } catch (_) { node = null; }
      }
    }
    return found.reverse();
  };
  const inRegions = (items, depth) => {
    const slots = [];
    const regions = new Map();
    for (const item of items) {
      const region = item.landmarks[depth];
      if (!region) {
        slots.push([item]);
      } else if (regions.has(region)) {
        regions.get(region).push(item);
      } else {
        const members = [item];
        regions.set(region, members);
        slots.push(members);
      }
    }
    return slots.flatMap((members) => (members.length === 1 && !members[0].landmarks[depth]
      ? members : inRegions(members, depth + 1)));
  };
  for (const item of byLines) {
    try { item.landmarks = landmarksAround(item.el); } catch (_) { item.landmarks = []; }
  }
  const ordered = inRegions(byLines, 0);
  // An open popup that its owner names (aria-controls, aria-owns: a dropdown's list drawn at the
  // end of the document, Quasar's, outside the main landmark its field is in) is read right
  // after its owner, as a person reads a list that opens under its field.
  try {
    for (const popup of openPopups) {
      const ids = [popup, ...itemsOf(allIn(popup, '[id]'))].map((node) => node.id).filter(Boolean);
      if (!ids.length) continue;
      const owner = ordered.findIndex(({ el }) => ['aria-controls', 'aria-owns'].some((name) =>
        (el.getAttribute(name) || '').split(/\s+/).some((id) => ids.includes(id))));
      if (owner < 0 || popup.contains(ordered[owner].el)) continue;
      const members = ordered.filter(({ el }) => popup.contains(el));
      if (!members.length || ordered.indexOf(members[0]) === owner + 1) continue;
      const rest = ordered.filter((item) => !members.includes(item));
      rest.splice(rest.indexOf(ordered[owner]) + 1, 0, ...members);
      ordered.splice(0, ordered.length, ...rest);
    }
  } catch (_) { /* read in place */ }
  // More in view than a listing holds: the first ones, those below reached by scrolling down;
  // at the bottom of what scrolls, where nothing would bring the last ones up, the last ones,
  // those above reached by scrolling up (Django's changelist: its pagination and Save).
  const scrollsFurther = (node) => node.scrollTop + node.clientHeight < node.scrollHeight - 2;
  // (Scrolled there: a view that does not scroll at all has no way to the others either way.)
  const atBottom = () => {
    const middle = Document.prototype.elementFromPoint.call(document, viewWidth / 2, viewHeight / 2);
    const page = document.scrollingElement || document.documentElement;
    let scrolled = page.scrollTop > 0;
    // A wheel scrolls the innermost box that can scroll, then the ones around it.
    for (let node = middle; node && node !== document.body && node !== document.documentElement;
      node = node.parentNode || node.host) {
      if (node.nodeType !== 1) continue;
      const overflow = getComputedStyle(node).overflowY;
      if (!['auto', 'scroll', 'overlay'].includes(overflow)) continue;
      if (scrollsFurther(node)) return false;
      scrolled = scrolled || node.scrollTop > 0;
    }
    return scrolled && !scrollsFurther(page);
  };
  let listed = ordered.slice(0, maxListed);
  // In view, but past the most a listing holds: said apart from what is below the view.
  let pastMax = 0;
  if (ordered.length > maxListed && (() => { try { return atBottom(); } catch (_) { return false; } })()) {
    listed = ordered.slice(ordered.length - maxListed);
    above += ordered.length - maxListed;
  } else {
    pastMax = ordered.length - listed.length;
  }

  const textOfIds = (el, ids) => {
    if (!ids) return '';
    const root = el.getRootNode();
    return ids.trim().split(/\s+/)
      .map((id) => root.getElementById && root.getElementById(id))
      .filter(Boolean)
      .map((node) => shownText(node) || node.textContent)
      .join(' ');
  };
  // A <label> wrapping its field: its own words, not the options of a <select> inside it. One
  // beside it may be an icon only (Django's search box: a magnifier with alt="Search").
  const labelText = (label, field) => {
    if (!label.contains(field)) return collapse(shownText(label)) || imageText(label) || '';
    if (showsSlots(label)) return slotted(label);
    const walker = label.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!field.contains(node) && !node.parentElement.closest('select, textarea, script, style')) {
        text += node.data + ' ';
      }
    }
    return text;
  };
  const imageText = (el) => imageAlt(el) || iconLabel(el);
  const imageAlt = (el) => {
    if (['img', 'area'].includes(el.localName) || (el.localName === 'input' && el.type === 'image')) {
      return el.getAttribute('alt');
    }
    const image = el.querySelector('img[alt]:not([alt=""])');
    return image ? image.getAttribute('alt') : '';
  };
  // An icon's own label names what it draws ("left", "delete"), not what pressing it does,
  // which a tooltip says where there is one (Ant Design labels its icons by their glyphs;
  // its pagination's item around the arrow is titled "Previous Page").
  const iconLabel = (el) => {
    const icon = el.querySelector('svg[aria-label], svg title');
    if (icon) return icon.getAttribute('aria-label') || icon.textContent;
    // An icon drawn by CSS names itself to a person's pointer, and to an accessibility tree,
    // by its own label or tooltip (Django's calendar link: <span title="Choose a Date">).
    const named = el.querySelector('[aria-label]:not([aria-label=""]), [title]:not([title=""])');
    return named && (named.getAttribute('aria-label') || named.getAttribute('title'));
  };
  // An icon font's glyph, named by its class as its kit names it (Font Awesome's "fa-check",
  // "fa-trash-can"; Bootstrap's "bi-pencil"; Glyphicons, Material Design Icons): what a person
  // sees on a button with no words (x-editable's ✓ and ✗ in Flask-Admin's lists). Not a style
  // class of the kit (size, weight, animation).
  // (A kit's own prefix before "icon-" too: AG Grid's "ag-icon-filter".)
  const ICON_CLASS = /^(?:fa|bi|glyphicon|mdi|ti|la|icon|[a-z]{1,8}-icon)-([a-z][a-z0-9-]*)$/;
  const ICON_STYLES = /^(?:solid|regular|light|thin|duotone|brands|sharp|fw|lg|xs|sm|xl|2xs|2xl|\d+x|spin|pulse|border|inverse|li|ul|stack(?:-\dx)?|flip(?:-.*)?|rotate(?:-.*)?|beat(?:-.*)?|bounce|fade|shake|spin-pulse|spin-reverse)$/;
  const ICON_VARIANTS = new Set(['fill', 'o', 'outline', 'alt', 'lg', 'sm']);
  const iconName = (el) => {
    for (const icon of [el, ...itemsOf(allIn(el, '[class]'))].slice(0, 20)) {
      for (const token of itemsOf(icon.classList || [])) {
        const match = ICON_CLASS.exec(token);
        if (!match || ICON_STYLES.test(match[1])) continue;
        // Less a kit's variants of one glyph ("trash3-fill", "x-lg", "trash-alt", "file-o").
        const name = match[1].split('-').map((word) => word.replace(/\d+$/, ''))
          .filter((word) => word && !ICON_VARIANTS.has(word)).join(' ');
        // (Font Awesome calls its × "times", later "xmark"; Bootstrap's is "x": a close or
        // cancel to a person.)
        if (name) return /^(?:times|xmark|x)$/.test(name) ? 'close' : name;
      }
    }
    return '';
  };
  const buttonInputText = (el) => {
    if (el.localName !== 'input' || !BUTTON_INPUTS.has(el.type)) return '';
    return el.value || { submit: 'Submit', reset: 'Reset' }[el.type] || '';
  };

  // Text a person sees, inside `container` but not inside `field`; with `plain`, not inside
  // another control either (a row's "Edit" button does not name its checkbox), or those
  // `plain` names.
  // What holds no words a person reads as such: a list's options, a field's text, code.
  const NOT_WORDS = 'select, textarea, script, style, template';
  const textAround = (container, field, plain, besides = NOT_WORDS) => {
    const walker = container.ownerDocument.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || field.contains(node) || parent.closest(besides)) continue;
      if (plain) {
        const control = parent.closest(plain === true ? CONTROLS : plain);
        if (control && container.contains(control)) continue;
      } else {
        // The options of a list beside the field are what it offers, not what it is (Select2's
        // search field above its results).
        const option = parent.closest('[role="option"]');
        if (option && container.contains(option) && !option.contains(field)) continue;
      }
      if (parent.checkVisibility && !parent.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })) continue;
      text += node.data + ' ';
    }
    return collapse(text);
  };
  const parentOf = (node) => node.parentElement || (node.getRootNode && node.getRootNode().host) || null;
  const ROW_WORDS = 60;
  const ROWS = 'tr, [role="row"], li, [role="listitem"]';
  const MENUS = 'nav, [role="navigation"]';
  // The words of a row (a table's, a list's, a card) a person reads beside `el` in it.
  const rowWords = (row, el, withButtons = false) => {
    const walker = row.ownerDocument.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    let text = '';
    // Words said twice (a heading and its screen readers' copy) are read once.
    const said = new Set();
    // (Words for screen readers only, Django's visually hidden "Model name Add link", are not
    // what a person reads.)
    for (let node = walker.nextNode(); node && text.length < ROW_WORDS * 2; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || el.contains(node) || parent.closest(NOT_WORDS)) continue;
      // The row's other buttons ("Edit" beside "Delete") are not what it is about; its links
      // often are (the item's name). (Unless asked for: see the alike elements.)
      const button = !withButtons && parent.closest('button, [role="button"]');
      if (button && row.contains(button)) continue;
      if (!node.data.trim() || (parent.checkVisibility && !parent.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true }))) continue;
      if (readersOnlyBelow(parent, row)) continue;
      const words = collapse(node.data);
      if (said.has(words)) continue;
      said.add(words);
      text += words + ' ';
    }
    return cut(collapse(text), ROW_WORDS);
  };
  // Marks on their own ("|", "×", "›") are no words: left out.
  const withoutMarks = (text) => collapse(String(text).replace(/(^|\s)[^\p{L}\p{N}\s]+(?=\s|$)/gu, ' '));
  // A <label> tied to nothing, just before the box a field is drawn in, where nothing but
  // numbers is written in that box (Dash's and Radix's sliders: the label above the widget,
  // the scale's marks and a value box in it). Not past a row, whose words are its context.
  // Before a slider's box, a few words of any element name it too (noUiSlider's handles, a
  // shop's "Price" above its range): no field is drawn there to be named by them instead.
  const SLIDER_NAME_WORDS = 4;
  const labelBeforeBox = (el, kind, alone = false) => {
    let node = el;
    // (What the field's own popup says, open inside its box, is not written there: a date
    // field's calendar. A field inside a popup is named inside it.)
    const inPopup = !!el.closest(POPUPS);
    const besides = inPopup ? NOT_WORDS : `${NOT_WORDS}, ${POPUPS}`;
    // A widget's thumb lies a few boxes deep (Radix: thumb, its wrapper, the track's root).
    for (let depth = 0; node && depth < 6 && node.localName !== 'body'; depth += 1, node = node.parentElement) {
      if (node !== el && (node.matches(ROWS) || (inPopup && node.matches(POPUPS))
        || !onlyNumbers(textAround(node, el, false, besides)))) return '';
      // (`alone`: not past a box that holds other fields, each of which it would name.)
      if (alone && node !== el && kind !== 'slider'
        && otherFields(node, el).some((other) => inPopup || !other.closest(POPUPS))) return '';
      const before = node.previousElementSibling;
      if (!before || allIn(before, FIELDS).length > 0) continue;
      if (before.localName === 'label' && !before.hasAttribute('for')) return before.innerText;
      const words = kind === 'slider' && before.getClientRects().length > 0
        && allIn(before, CONTROLS).length === 0 ? collapse(before.innerText) : '';
      if (words && words.split(' ').length <= SLIDER_NAME_WORDS && !onlyNumbers(words)) return words;
    }
    return '';
  };
  // A field nothing names is named by what a person reads beside it: a <label> next to it that
  // is not tied to another field, else the text of the nearest enclosing row, list item or box
  // that holds no other field (a todo's checkbox by its todo, a table row's by the row).
  const contextOf = (el) => {
    const beside = untiedLabelBeside(el);
    const text = beside && collapse(beside.innerText);
    if (text) return text;
    // Out through a shadow root, itself a box: a component's field beside its words at the
    // root's top (Bokeh's checkbox: its input, then a div of its label).
    const outward = (node) => node.parentElement || (node.parentNode && node.parentNode.nodeType === 11
      ? node.parentNode : node.host) || null;
    let node = outward(el);
    for (let depth = 0; node && depth < 4 && node.localName !== 'body'; depth += 1, node = outward(node)) {
      if (otherFields(node, el).length > 0) return '';
      // A table row's words include its links, which often name its item (Django's
      // changelist: the object's name), not its other buttons.
      const around = node.matches && node.matches('tr, [role="row"]') ? rowWords(node, el)
        : textAround(node, el, true) || textAround(node, el, false);
      // What another dropdown drawn in the box shows is its value, not this field's name
      // (Flask-Admin's filter row: "Active", then its operation "equals" and its value "Yes",
      // each a Select2 box; a calendar's year field beside its month's dropdown).
      const dropdowns = [...new Set([...standInFor.keys(), ...drawnSelects])]
        .filter((box) => box !== el && node.contains(box));
      const text = dropdowns.reduce((words, box) => words.replace(collapse(box.innerText), ' '), around);
      // Marks on their own (the "|" between a date field's "Today" and calendar links) are
      // no words: left out, and where nothing else is, a box further out may name it, but not
      // past another dropdown, a field as any other.
      const words = withoutMarks(text);
      if (words) return words;
      if (dropdowns.length > 0) return '';
    }
    return '';
  };
  // A field alone in a dialog or a popover is named by the dialog's title, its name or else its
  // first heading (x-editable edits a value in place in a popover titled "Enter username").
  const TITLED_BOXES = 'dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"], '
    + '[role="tooltip"], [popover]';
  const dialogTitle = (el) => {
    const dialog = el.closest(TITLED_BOXES);
    if (!dialog) return '';
    if (otherFields(dialog, el).length > 0) return '';
    const heading = dialog.querySelector('h1, h2, h3, h4, h5, h6, [role="heading"]');
    return dialog.getAttribute('aria-label')
      || textOfIds(dialog, dialog.getAttribute('aria-labelledby'))
      || (heading ? heading.innerText : '');
  };
  // A field alone in a table's cell is named by its column's header, as a person reads a table
  // of fields (Django's tabular inline: "Title", not its form's name "book_set-0-title").
  // Where words are written beside the column's fields, in this row or another, the column is
  // about those words (Swagger UI's parameters: "Description", each parameter's text beside
  // its value's field, the text of some gone once it is tried out): the row's first cell names
  // it then, what the row is about ("species string (query)").
  const COLUMN_ROWS_READ = 50;
  // A table cell's column, counting the spans of the cells before it; the cell of a row at one.
  const columnOf = (cell) => {
    let column = 0;
    for (const other of itemsOf(cell.parentElement.cells)) {
      if (other === cell) break;
      column += other.colSpan || 1;
    }
    return column;
  };
  const cellAt = (row, column) => {
    let at = 0;
    for (const cell of itemsOf(row.cells)) {
      at += cell.colSpan || 1;
      if (column < at) return cell;
    }
    return null;
  };
  // The words over `el`'s column: those of the first header row above its own that has any
  // there and no field (a table's header over its filter row's fields).
  const columnWords = (el) => {
    const cell = el.closest('td, th');
    const row = cell && cell.parentElement;
    const table = row && row.localName === 'tr' && row.closest('table');
    if (!table) return '';
    const column = columnOf(cell);
    for (const above of itemsOf(table.rows)) {
      if (above === row) break;
      // (A header's row: the table's head, or a row of header cells alone.)
      if (!(above.parentElement && above.parentElement.localName === 'thead')
        && !itemsOf(above.cells).every((cell) => cell.localName === 'th')) continue;
      const over = cellAt(above, column);
      // (Not a header for screen readers only: Django's sidebar's "Model name".)
      const words = over && allIn(over, FIELDS).length === 0 && !readersOnlyBelow(over, table)
        && withoutMarks(wordsOf(over));
      if (words) return words;
    }
    return '';
  };
  const columnHeader = (el) => {
    const cell = el.closest('td');
    const row = cell && cell.parentElement;
    const table = row && row.closest('table');
    if (!table || row.localName !== 'tr') return '';
    if (otherFields(cell, el).length > 0) return '';
    const column = columnOf(cell);
    const first = table.rows[0];
    const head = (table.tHead && table.tHead.rows[table.tHead.rows.length - 1])
      || (first && first !== row && itemsOf(first.cells).every((c) => c.localName === 'th') ? first : null);
    if (!head) return '';
    const aboutWords = itemsOf(table.rows).slice(0, COLUMN_ROWS_READ).some((r) => {
      const c = r === head ? null : cellAt(r, column);
      const field = c && c.localName === 'td' && columnOf(c) === column && (c === cell ? el : allIn(c, FIELDS)[0]);
      return field && withoutMarks(textAround(c, field, true));
    });
    if (aboutWords) {
      const named = row.cells[0];
      return named !== cell && otherFields(named, el).length === 0 ? withoutMarks(wordsOf(named)) : '';
    }
    const header = cellAt(head, column);
    return header ? wordsOf(header) : '';
  };
  // A field alone in its cell, in a row of several fields with no column headers, is named by
  // the row's first cell when that cell holds no field: what the row is about (Flask-Admin's
  // filter row: "× Published", then its operation's select and its value's field).
  const rowHeader = (el) => {
    const cell = el.closest('td');
    const row = cell && cell.parentElement;
    if (!row || row.localName !== 'tr' || row.cells[0] === cell) return '';
    if (otherFields(row, el).length === 0 || otherFields(cell, el).length > 0) return '';
    const first = row.cells[0];
    if (otherFields(first, el).length > 0) return '';
    return withoutMarks(wordsOf(first));
  };
  // What CSS draws as an icon's text (TodoMVC's "×"), as an accessibility tree names it.
  const drawnText = (el) => ['::before', '::after']
    .map((pseudo) => /^"(.*)"$/.exec(getComputedStyle(el, pseudo).content))
    .filter(Boolean)
    .map((match) => match[1])
    .join(' ');

  // A web component's control shows words given to its host through a <slot> (Shoelace's
  // button, checkbox and switch), which the control's innerText and textContent leave out:
  // read as drawn, the slots by what they show.
  const showsSlots = (node) => !!node.shadowRoot || allIn(node, 'slot').length > 0;
  const slotted = (node) => {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType === 11) return itemsOf(node.childNodes).map(slotted).join('');
    if (node.nodeType !== 1 || ['script', 'style', 'template', 'select', 'textarea'].includes(node.localName)) return '';
    if (node.localName === 'slot') return itemsOf(node.assignedNodes({ flatten: true })).map(slotted).join('');
    const style = getComputedStyle(node);
    if (style.display === 'none' || (style.display !== 'contents' && !visibleByCss(node))) return '';
    const inner = node.shadowRoot ? slotted(node.shadowRoot) : itemsOf(node.childNodes).map(slotted).join('');
    // Boxes (a block, a button) are words apart; inline text runs on.
    return style.display === 'inline' || style.display === 'contents' ? inner : ' ' + inner + ' ';
  };
  // What a person reads in `node`.
  const shownText = (node) => (showsSlots(node) ? slotted(node) : node.innerText);

  // An element's words less what the page hides from screen readers: an icon font's ligature
  // beside them ("keyboard_arrow_right Advanced" is read "Advanced"). What is hidden stays
  // when it is all there is: an icon-only button's ligature ("delete") is its best clue.
  // (An SVG element has no innerText: its text, if any, is its textContent.) CSS text-transform
  // changes how words are drawn, not what they are: a design system's upper-case button
  // ("ADD") is named as the page wrote it ("Add"), as an accessibility tree names it.
  const wordsOf = (node) => {
    if (showsSlots(node)) return slotted(node);
    const written = String(node.textContent || '');
    if (typeof node.innerText !== 'string') return written;
    const drawn = node.innerText;
    return drawn !== written && collapse(drawn).toLowerCase() === collapse(written).toLowerCase() ? written : drawn;
  };
  const contentText = (el) => {
    const text = wordsOf(el);
    let spoken = text;
    for (const node of el.querySelectorAll('[aria-hidden="true"]')) {
      const outer = node.parentElement && node.parentElement.closest('[aria-hidden="true"]');
      if (outer && el.contains(outer)) continue;
      const words = wordsOf(node).trim();
      if (words) spoken = spoken.replace(words, ' ');
    }
    return collapse(spoken) ? spoken : text;
  };

  // An option's words, less those of a button inside it (a chosen item's "Remove item",
  // Choices.js's), which is not what the option is.
  const optionText = (el) => itemsOf(el.querySelectorAll('button'))
    .reduce((text, button) => text.replace(wordsOf(button), ' '), contentText(el));

  // The first of `sources` that names something, cut to a label's length.
  const firstName = (sources) => {
    for (const source of sources) {
      // A source the page made unreadable names nothing; the next one may.
      let text = '';
      try { text = collapse(source()); } catch (_) { /* the next source */ }
      if (text) return cut(text, LABEL_LIMIT);
    }
    return '';
  };
  // The labels naming `el`: those a browser ties to it, else any whose `for` is its id (a
  // hidden field's, a box's, which no browser ties a label to).
  const labelsFor = (el) => {
    const tied = el.labels ? itemsOf(el.labels) : [];
    return tied.length || !el.id ? tied
      : itemsOf(allIn(el.getRootNode(), 'label')).filter((label) => label.htmlFor === el.id);
  };
  const labelWords = (el) => labelsFor(el).map((label) => label.innerText).join(' ');
  // A dropdown the page draws as a button or a box (MUI's, Radix's, Dash's) shows its value as
  // its text, which ARIA often makes part of its name too (aria-labelledby = the label and
  // the value): named by its label alone, its text being its value.
  const drawnSelectName = (el) => {
    const value = collapse(contentText(el));
    const standsFor = standInFor.get(el);
    return firstName([
      () => el.getAttribute('aria-label'),
      () => labelWords(el),
      () => (standsFor ? labelWords(standsFor) : ''),
      // The native <select> it keeps hidden inside its box (Choices.js's), named by its labels.
      () => {
        const kept = el.querySelector('select');
        return kept ? labelWords(kept) : '';
      },
      // A label drawn inside the box (Vuetify's), the first a person sees.
      () => labelsInside(el)[0] || '',
      () => {
        const ids = (el.getAttribute('aria-labelledby') || '').trim().split(/\s+/);
        const named = ids.map((id) => collapse(textOfIds(el, id))).filter((t) => t && t !== value);
        return named.join(' ');
      },
      // A <label> tied to nothing just before the box it is drawn in (Dash's dropdown under
      // `html.Label("Country")`, its box holding a focus catcher no one sees).
      () => labelBeforeBox(el, 'select'),
      () => contextOf(el),
      () => rowHeader(el),
    ]);
  };
  // What a dropdown around a read-only field draws beside it, the field's own value left empty
  // (Element Plus's select: the option chosen, else its placeholder, as a <select> shows its
  // first option): the words of the box around the field, a few levels out at most, but a
  // <label>'s, which hold the dropdown's name, and a placeholder its class calls one.
  const drawnChoice = (field) => {
    // (Nor its own name, drawn in the box as a floating label that is no <label>: Quasar's
    // empty multiple select showed "Extras" as its choice.)
    const name = collapse(field.getAttribute('aria-label') || labelWords(field));
    for (const box of boxesOfChoice(field)) {
      const words = [...drawnPlaceholders(box), ...itemsOf(allIn(box, 'label'))]
        .reduce((text, aside) => text.replace(collapse(aside.innerText), ''), collapse(box.innerText)).trim();
      if (words) return words === name ? '' : words;
    }
    return '';
  };
  // The boxes around a dropdown's field that may show its choice: a few levels out at most,
  // up to a <label> (which holds its name) or a box holding another control.
  const boxesOfChoice = (field) => {
    const boxes = [];
    for (let box = field.parentElement, level = 0; box && level < 3 && box.localName !== 'label';
      level += 1, box = box.parentElement) {
      if (itemsOf(allIn(box, 'input, select, textarea, button')).some((other) => other !== field)) break;
      boxes.push(box);
    }
    return boxes;
  };
  // What a page draws in a dropdown until something is chosen, told by its class (Ant Design's
  // `ant-select-selection-placeholder`, react-select's `…-placeholder`), is no choice. (Element
  // Plus draws the option chosen in its placeholder's box too, marked as the selected item.)
  const drawnPlaceholders = (box) => itemsOf(allIn(box, '[class*="placeholder" i]'))
    .filter((shown) => !/selected|chosen/i.test(shown.getAttribute('class')));
  // What a tag field has chosen: the items it draws in its box before its own text field,
  // each some words and a control of no words to remove it (Select2 3's multiple choice, its ×
  // an empty link; Tom Select's ×). The field's own text is only what filters its list;
  // empty, it would say nothing was chosen.
  const CHIPS_MOST = 50;
  // Each chip's remover, and the chip's words, which say what it removes (see below).
  const chipOf = new Map();
  const REMOVER = 'a, button, [role="button"], [class*="remove" i], [class*="close" i], [class*="delete" i]';
  // The controls of no words in `item` that remove it, the outermost (an icon inside one may
  // be classed "close" too).
  const removersIn = (item) => itemsOf(item.querySelectorAll(REMOVER))
    .filter((remover, _, all) => !all.some((other) => other !== remover && other.contains(remover))
      && /^[×✕✖x]?$/i.test(collapse(remover.innerText)) && visibleByCss(remover));
  const chipsBefore = (field) => {
    // The boxes around the field, a few levels out, up to a <label> or one holding another
    // field seen (the chips' removers and the field's own buttons are none: Streamlit's).
    for (let box = field.parentElement, level = 0; box && level < 3 && box.localName !== 'label';
      level += 1, box = box.parentElement) {
      if (itemsOf(allIn(box, 'input, select, textarea')).some((other) => other !== field && !unseen(other))) break;
      // The box's children before the one holding the field, each a chip if it holds some
      // words and one such control (small ones only: not a whole menu before a search box; a
      // box of many is no tag field's); a group of such chips, its children (Streamlit's
      // "Selected values").
      if (box.children.length > CHIPS_MOST) break;
      const before = [];
      for (const item of itemsOf(box.children)) {
        if (item.contains(field)) break;
        before.push(item);
      }
      const items = before.flatMap((item) => (item.children.length > 1 && item.children.length <= CHIPS_MOST
        && removersIn(item).length > 1 ? itemsOf(item.children) : [item]));
      const chips = [];
      for (const item of items) {
        if (item.getElementsByTagName('*').length > 12 || !visibleByCss(item)) continue;
        const removers = removersIn(item);
        if (removers.length !== 1) continue;
        // Less the control's ×, drawn at either end.
        const mark = collapse(removers[0].innerText);
        let words = collapse(item.innerText);
        if (mark && words.endsWith(mark)) words = words.slice(0, -mark.length).trim();
        else if (mark && words.startsWith(mark)) words = words.slice(mark.length).trim();
        if (words) {
          chips.push(words);
          chipOf.set(removers[0], words);
        }
      }
      if (chips.length) return chips.join(', ');
    }
    return '';
  };

  // What a combobox that filters as one types shows under its field once an option is chosen
  // and the field emptied (Ant Design's select with search): the words drawn where the field
  // is, a few boxes out at most, but a placeholder and a label (a floating one lies there too).
  const drawnUnder = (field) => {
    const area = field.getBoundingClientRect();
    const inField = (rect) => {
      const x = rect.left + rect.width / 2;
      const y = rect.top + rect.height / 2;
      return x >= area.left && x <= area.right && y >= area.top && y <= area.bottom;
    };
    for (const box of boxesOfChoice(field)) {
      const placeholders = drawnPlaceholders(box);
      const walker = box.ownerDocument.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      let words = '';
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        const label = parent && parent.closest('label');
        if (!parent || !node.data.trim() || (label && box.contains(label)) || parent.closest('[aria-hidden="true"]')
          || placeholders.some((shown) => shown.contains(parent))) continue;
        if (inField(parent.getBoundingClientRect()) && visibleByCss(parent)) words += node.data + ' ';
      }
      if (collapse(words)) return collapse(words);
    }
    return '';
  };
  // What a dropdown the page draws shows, its pieces apart: a multiple choice's chips touch
  // ("Widgets" "Gadgets" read "WidgetsGadgets" by innerText), so words that meet across two
  // elements are said apart by a comma. What is hidden from screen readers (a chip's ×) and a
  // label drawn inside it are not read.
  const choicesText = (el) => {
    const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let text = '';
    let last = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || !node.data.trim() || parent.closest('[aria-hidden="true"], script, style, select')) continue;
      // What a chosen item's own button says ("Remove item", Choices.js's) is not a choice.
      const button = parent.closest('button');
      if (button && el.contains(button) && button !== el) continue;
      // A label drawn inside it names it (see below).
      const label = parent.closest('label');
      if (label && el.contains(label) && el !== label) continue;
      if (parent.checkVisibility && !parent.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })) continue;
      const meet = last && last !== parent && /[\p{L}\p{N}]$/u.test(text) && /^[\p{L}\p{N}]/u.test(node.data);
      text += (meet ? ', ' : '') + node.data;
      last = parent;
    }
    return text || contentText(el);
  };
  // (Not one clipped away for screen readers: Select2's for its focus catcher, "User" in the
  // box that shows "User 5".)
  const labelsInside = (el) => itemsOf(allIn(el, 'label'))
    .filter((label) => visibleByCss(label) && !clippedAway(label)).map((label) => collapse(label.innerText)).filter(Boolean);
  const isDrawnSelect = (el, kind) => kind === 'select' && !['input', 'select'].includes(el.localName);

  // A rich text editor that keeps its value in a hidden field beside it (Wagtail's Draftail,
  // Trix, Django's editors, CodeMirror 5 on a page's textarea) is named by that field, which no
  // browser ties to the editor: the one hidden field in the editor's own box, no other field in
  // it.
  const hiddenPartner = (el) => {
    for (let node = el.parentElement, depth = 0; node && depth < 6; node = node.parentElement, depth += 1) {
      if (itemsOf(allIn(node, FIELDS)).some((other) => other !== el && !el.contains(other) && visibleByCss(other)
        && other.getClientRects().length)) return null;
      const hidden = itemsOf(allIn(node, 'input[id], textarea[id]'))
        .filter((field) => field !== el && (field.type === 'hidden' || !field.getClientRects().length));
      if (hidden.length === 1) return hidden[0];
    }
    return null;
  };
  // Its <label for>, early among the editor's names.
  const hiddenPartnerLabel = (el) => {
    const partner = hiddenPartner(el);
    if (!partner) return '';
    const label = labelsFor(partner)[0];
    return label ? label.innerText : '';
  };
  // Else its name or its id's words, as the last resort (Datasette's SQL editor: "sql").
  const hiddenPartnerWords = (el) => {
    const partner = hiddenPartner(el);
    return partner ? partner.getAttribute('name') || idWords(partner) : '';
  };

  // An element's tooltip, else that of the item it alone fills: JupyterLab's status bar item
  // titled "0 Terminals, 0 Kernel sessions" around its button "0", its crumb titled with the
  // folder's path around the icon drawn pressable.
  const tooltipOf = (el) => {
    for (let node = el, depth = 0; node && depth < 3; node = node.parentElement, depth += 1) {
      if (depth > 0 && node.children.length !== 1) break;
      const title = node.getAttribute('title');
      if (title && title.trim()) return title;
    }
    return '';
  };
  // An element's tooltip that says what its words say and more names it: a calendar's day
  // "13" titled "2026-12-13" (Ant Design's), a name cut short ("Quarterly rep…") titled in
  // full, an arrow "›" titled "Next Page". A tooltip that says something else (a hint, a
  // shortcut) does not.
  const fullerTitle = (el, text) => {
    // One line, of a name's length: not a tooltip of details (JupyterLab's tab: its file's
    // name, path and times, a line each).
    const tooltip = tooltipOf(el);
    const title = collapse(tooltip);
    if (!text || title.length <= text.length || title.length > LABEL_LIMIT || /[\r\n]/.test(tooltip)) return text;
    // A mark of no words ("›", "«", "×") says less than its tooltip ("Next Page").
    if (!/[\p{L}\p{N}]/u.test(text)) return title;
    const cutShort = text.replace(/(?:…|\.\.\.)$/, '');
    if (cutShort !== text) return cutShort && title.startsWith(cutShort) ? title : text;
    // As a word of it; a number also written with leading zeros ("1" in "2026-12-01").
    const words = /^\d+$/.test(text) ? '0*' + text : text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp('(?:^|[^\\p{L}\\p{N}])' + words + '(?:$|[^\\p{L}\\p{N}])', 'u').test(title) ? title : text;
  };
  const STATE_WORDS = /^(?:not |un)?(?:checked|selected)$/i;
  const labelOf = (el, kind) => {
    if (isDrawnSelect(el, kind)) return drawnSelectName(el);
    const isField = ['input', 'select', 'textarea'].includes(el.localName);
    const editor = editors.get(el);
    // An editor's hidden field speaks the cursor's place to screen readers ("Cursor at row
    // 1"): the editor is named as a field is, from its own label or what is around it.
    const sources = editor ? [
      () => textOfIds(el, el.getAttribute('aria-labelledby')),
      () => (el.labels ? itemsOf(el.labels).map((label) => labelText(label, el)).join(' ') : ''),
      () => editor.getAttribute('aria-label'),
      // A <label for> naming the editor's box, which no label can point a browser at.
      () => labelWords(editor),
      () => hiddenPartnerLabel(el),
      () => contextOf(editor),
      () => hiddenPartnerWords(el),
    ] : sliderFor.has(el) ? [
      () => labelWords(sliderFor.get(el)),
      () => labelBeforeBox(sliderFor.get(el), kind),
      () => contextOf(sliderFor.get(el)),
    ] : [
      // A toggle "named" by its own state (AG Grid's boolean cells: aria-label "checked") is
      // not named by it: its row names it, as any unnamed one.
      // Nor is a field by an aria-label that repeats its placeholder (Dash's date field's
      // "Select Date"): a hint, which a label a person sees beside it comes before.
      () => ((TOGGLE_KINDS.has(kind) && STATE_WORDS.test(collapse(el.getAttribute('aria-label'))))
        || (el.hasAttribute('placeholder') && collapse(el.getAttribute('aria-label')) === collapse(el.getAttribute('placeholder')))
        ? '' : el.getAttribute('aria-label')),
      () => textOfIds(el, el.getAttribute('aria-labelledby')),
      () => (isField && el.labels ? itemsOf(el.labels).map((label) => labelText(label, el)).join(' ') : ''),
      () => (!isField && ['textarea', 'input', 'editable'].includes(kind) ? hiddenPartnerLabel(el) : ''),
      // A field's innerText is nothing useful (a <select>'s is every option), and an editor's,
      // a textbox's or a slider's is its value (noUiSlider's tooltip in its handle while it is
      // pressed), not its name (ARIA names those from their author only).
      () => (isField || ['input', 'textarea', 'editable', 'slider'].includes(kind) ? ''
        : fullerTitle(el, kind === 'option' ? optionText(el) : contentText(el))),
      // A <label> tied to nothing just before the field's box is what a person reads as its
      // name; a placeholder is a hint of what to type ("Full name" under "Customer name").
      () => (isFieldKind(kind) ? labelBeforeBox(el, kind, true) : ''),
      () => el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'),
      () => (isFieldKind(kind) ? labelBeforeBox(el, kind) : ''),
      () => buttonInputText(el),
      () => imageAlt(el),
      () => tooltipOf(el),
      () => iconLabel(el),
      () => (isFieldKind(kind) ? columnHeader(el) : ''),
      // (One in a header cell, a table's filter row's, by the words over its column.)
      () => (isFieldKind(kind) && el.closest('th') ? columnWords(el) : ''),
      () => (isFieldKind(kind) ? dialogTitle(el) : ''),
      () => (isFieldKind(kind) ? contextOf(el) : drawnText(el)),
      // What a class says a control does comes before the glyph it draws (DataTable's
      // "first-page" button, its icon Font Awesome's "angle-double-left").
      () => (isFieldKind(kind) ? '' : classWords(el)),
      () => (isFieldKind(kind) ? rowHeader(el) : iconName(el)),
      () => nameWords(el),
      () => idWords(el),
      () => (!isField && ['textarea', 'input', 'editable'].includes(kind) ? hiddenPartnerWords(el) : ''),
    ];
    return firstName(sources);
  };
  // The last resort: an id made of words, read as those words (React TodoMVC's unlabelled
  // "toggle-all" is "toggle all", a "firstName" "first name"), a developer's usual short
  // words in full ("subscribe-btn" is "subscribe button"). An id with a digit or a one-letter
  // part is taken for one a program made up (":r1:", "ember123", "cb-7") and names nothing.
  const SHORT_WORDS = new Map(Object.entries({
    btn: 'button', msg: 'message', pwd: 'password', passwd: 'password', img: 'image',
    desc: 'description', qty: 'quantity', addr: 'address', txt: 'text', lbl: 'label',
    nav: 'navigation', prev: 'previous', cfg: 'settings', del: 'delete', srch: 'search',
  }));
  // (Nor one with a part no one could say: five consonants in a row, as a random string of
  // letters has, Dash's "input-mxahdssc".)
  const MADE_UP = /[bcdfghjklmnpqrstvwxz]{5}/;
  const programWords = (name, numbered = false) => {
    const words = (name || '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .split(/[-_.[\]\s]+/)
      .filter(Boolean)
      .map((word) => word.toLowerCase());
    const isWord = (word) => /^[a-z]{2,}$/.test(word) && !MADE_UP.test(word);
    if (!words.some(isWord) || words.some((word) => !isWord(word) && !(numbered && /^\d+$/.test(word)))) return '';
    return words.map((word) => SHORT_WORDS.get(word) || word).join(' ');
  };
  const idWords = (el) => programWords(el.getAttribute('id'));
  // A field's name, as a form sends it, read as words where it is made of them, a row's
  // number among them (Datasette's "_filter_column_1" is "filter column 1", Rails'
  // "user[email]" "user email"), else as it is.
  const nameWords = (el) => programWords(el.getAttribute('name'), true) || el.getAttribute('name');

  // For a control drawn with nothing to read (an arrow in an SVG or in CSS), after its tooltip
  // and before its glyph's name: the words of a class that says what it does, from that word
  // on (flatpickr's "flatpickr-next-month" is "next month", Swiper's "swiper-button-prev"
  // "previous", Magnific Popup's "mfp-close" "close", react-datepicker's
  // "…__navigation--next" "next").
  const ACTIONS = new Set(['prev', 'previous', 'next', 'close', 'back', 'forward', 'expand',
    'collapse', 'remove', 'delete', 'add', 'edit', 'search', 'menu', 'clear', 'play', 'pause',
    'increase', 'decrease', 'increment', 'decrement', 'first', 'last', 'filter', 'sort',
    'settings', 'refresh', 'download', 'upload', 'share', 'copy', 'save', 'cancel', 'undo',
    'redo', 'reset', 'more', 'zoom', 'submit', 'send']);
  const DRAWN_AS = new Set(['btn', 'button', 'icon', 'arrow', 'link', 'control', 'ctrl', 'svg']);
  const classWords = (el) => {
    for (const token of itemsOf(el.classList || [])) {
      const words = token.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[-_\s]+/);
      const at = words.findIndex((word) => ACTIONS.has(word));
      if (at < 0) continue;
      // Less what names the kind of thing drawn ("close-icon", "next-btn").
      return words.slice(at).filter((word, i) => i === 0 || !DRAWN_AS.has(word))
        .map((word) => (word === 'prev' ? 'previous' : word)).join(' ');
    }
    return '';
  };

  const hrefOf = (el, kind) => {
    const raw = kind === 'link' ? el.getAttribute('href') : null;
    if (raw === null) return '';
    let url;
    try { url = new URL(raw, el.baseURI).href; } catch (_) { return ''; }
    // javascript: links are click handlers, not places to go.
    return url.startsWith('javascript:') ? '' : cut(url, HREF_LIMIT);
  };

  // The error a form shows in the field's own box (Django's and Wagtail's error list, a
  // Bootstrap invalid-feedback), which its aria-describedby may leave out for the help text.
  const errorBeside = (el, drawn = false) => {
    let node = el.parentElement;
    for (let depth = 0; node && depth < 4 && node.localName !== 'form'; depth += 1, node = node.parentElement) {
      if (itemsOf(allIn(node, FIELDS)).some((other) => other !== el && !el.contains(other))) return '';
      const shown = itemsOf(allIn(node, '[role="alert"], [class*="error" i], [id*="error" i], .invalid-feedback'))
        .filter((box) => !drawn || transparentOnly(box))
        .map((box) => collapse(box.innerText)).find(Boolean);
      if (shown) return shown;
    }
    return '';
  };
  // Why the page or the browser refuses a field's value, once the page says so (a form's
  // error text, tied to the field) or a person sent the form (the browser's own message, which
  // it shows in a bubble no listing sees); null while nothing is said.
  const invalidity = (el) => {
    if (el.getAttribute('aria-invalid') === 'true') {
      const named = el.getAttribute('aria-errormessage');
      return collapse(named ? textOfIds(el, named) : errorBeside(el) || textOfIds(el, el.getAttribute('aria-describedby')));
    }
    let userInvalid = false;
    try { userInvalid = el.matches(':user-invalid'); } catch (_) { /* an older engine */ }
    // A field the browser finds invalid whose error the page draws beside it (Bootstrap's
    // .invalid-feedback, shown once its script marked the form validated) is said so, in the
    // page's words.
    const drawnError = el.matches && el.matches(':invalid') ? errorBeside(el, true) : '';
    if (drawnError) return collapse(drawnError);
    return userInvalid ? collapse(el.validationMessage) : null;
  };

  // The one of its peers (its parent's children of its tag) marked chosen by a class alone,
  // with no ARIA: a pagination's page (Ant Design's `ant-pagination-item-active`), a group's
  // button (Bootstrap's `active`, Bokeh's `bk-active`), a calendar's day, a filter's link in
  // the item it alone fills (TodoMVC's `<li><a class="selected">`), the mark on either.
  // A class of that form may name instead: Flask-Admin's cells and headers carry their
  // column's name (`col-name`, `col-email`, `col-active`), so the column "active" is no chosen
  // one. A class is such a name where the peers (at its level) that carry a class of its
  // prefix, three at least, carry one each, each another; a state is added beside a name
  // (`ant-pagination-item-3 ant-pagination-item-active`) or shared (`tab-inactive` on the rest).
  const CHOSEN_CLASS = /^(.*[-_])?(?:active|selected|current|checked)$/i;
  const chosenByClass = (el) => {
    const classesOf = (node) => itemsOf((node && node.classList) || []);
    // Whether the peers of `level` name themselves by classes of `prefix`, one each, each
    // another (looked at once per level and prefix while this element is read: a row of many
    // cells may all carry one).
    const namingSchemes = new Map();
    const namesWith = (prefix, level) => {
      if (!namingSchemes.has(level)) namingSchemes.set(level, new Map());
      const schemes = namingSchemes.get(level);
      if (!schemes.has(prefix)) {
        const found = level.map((peer) => classesOf(peer).filter((other) => other.startsWith(prefix)))
          .filter((tokens) => tokens.length);
        schemes.set(prefix, found.length >= 3 && found.every((tokens) => tokens.length === 1)
          && new Set(found.map((tokens) => tokens[0])).size === found.length);
      }
      return schemes.get(prefix);
    };
    const names = (token, level) => {
      const prefix = CHOSEN_CLASS.exec(token)[1];
      return !!prefix && namesWith(prefix, level);
    };
    // Whether each of `level` (the peers, or the children they alone hold, `depth` levels
    // down) is marked chosen, at its level or below.
    const marks = (level, depth) => {
      const here = level.map((node) => classesOf(node)
        .some((token) => CHOSEN_CLASS.test(token) && !names(token, level)));
      if (depth === 0) return here;
      const below = marks(level.map((node) => (node && node.children.length === 1 ? node.children[0] : null)), depth - 1);
      return here.map((marked, i) => marked || below[i]);
    };
    const anyMark = (node, depth) => classesOf(node).some((token) => CHOSEN_CLASS.test(token))
      || (depth > 0 && node.children.length === 1 && anyMark(node.children[0], depth - 1));
    let item = el;
    let depth = 0;
    for (; depth < 2 && item.parentElement && item.parentElement.children.length === 1; depth += 1) {
      item = item.parentElement;
    }
    // The peers are looked at only for an item that carries such a class (a list of 2000).
    if (!item.parentElement || !anyMark(item, depth)) return false;
    const peers = itemsOf(item.parentElement.children).filter((peer) => peer.localName === item.localName);
    if (peers.length < 2) return false;
    const marked = marks(peers, depth);
    return marked[peers.indexOf(item)] && marked.filter(Boolean).length === 1;
  };
  // A control marked disabled by a class alone, its own or that of the item it alone fills
  // (Bootstrap's pagination: `<li class="page-item disabled"><a>«</a>` on the first page;
  // Ant Design's `ant-pagination-disabled`). Not a field's: its class may be only a look, and
  // typing into a field said disabled is refused.
  const DISABLED_CLASS = /^(?!(?:not|non|no)[-_])(?:.*[-_])?disabled$/i;
  const disabledByClass = (el) => {
    for (let node = el, depth = 0; node && depth < 3; node = node.parentElement, depth += 1) {
      if (depth > 0 && node.children.length !== 1) break;
      if (itemsOf(node.classList || []).some((token) => DISABLED_CLASS.test(token))) return true;
    }
    return false;
  };
  const stateOf = (el, kind) => {
    const tag = el.localName;
    const role = (el.getAttribute('role') || '').toLowerCase();
    const parts = [];
    if (TOGGLE_KINDS.has(kind) || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      // A field given a role of its own says its state in ARIA, which is what the page draws
      // (Element Plus's switch, whose checkbox keeps `checked` false after a tap on its label).
      const aria = el.getAttribute('aria-checked');
      const declared = (tag !== 'input' || el.hasAttribute('role')) && (aria === 'true' || aria === 'false');
      const checked = declared ? aria === 'true' : tag === 'input' ? el.checked : false;
      parts.push(checked ? '(checked)' : '(unchecked)');
    } else if (tag === 'select' && (el.multiple || el.size > 1)) {
      // A list box shows its options, not one chosen: "(empty)" would say it has none (Django's
      // "Available tags"). Said with how many there are, and the first few when none is chosen.
      const chosen = collapse(itemsOf(el.selectedOptions).map((option) => option.text).join(', '));
      const count = el.options.length;
      const some = itemsOf(el.options).slice(0, 5).map((option) => collapse(option.text)).join(', ');
      if (chosen) parts.push(quoted(chosen, VALUE_LIMIT) + ' (of ' + count + ' options)');
      else if (count) parts.push('(none chosen of ' + count + ' options: ' + cut(some, VALUE_LIMIT) + (count > 5 ? ', …)' : ')'));
      else parts.push('(no options)');
    } else if (tag === 'select') {
      const chosen = collapse(itemsOf(el.selectedOptions).map((option) => option.text).join(', '));
      parts.push(chosen ? quoted(chosen, VALUE_LIMIT) : '(empty)');
    } else if (tag === 'input' && kind === 'select') {
      const shown = el.value || drawnChoice(el);
      parts.push(shown ? quoted(shown, VALUE_LIMIT) : '(empty)');
    } else if (isDrawnSelect(el, kind)) {
      // What the native <select> it keeps inside says is chosen (Choices.js's: its open list
      // is inside the box too), else what it shows, less the label drawn inside it and a
      // placeholder its class calls one (Dash's "Pick a country").
      // Over a hidden field, what it shows is a placeholder while the field keeps no value.
      const kept = el.querySelector('select');
      const hiddenField = standInFor.get(el);
      const shown = kept ? collapse(itemsOf(kept.selectedOptions).map((option) => option.text).join(', '))
        : hiddenField && hiddenField.localName === 'input' && !hiddenField.value ? ''
          : [...labelsInside(el), ...drawnPlaceholders(el).map((shown) => collapse(shown.innerText))]
            .reduce((text, aside) => (aside ? text.replace(aside, '') : text), collapse(choicesText(el))).trim();
      parts.push(shown ? quoted(shown, VALUE_LIMIT) : '(empty)');
    } else if (tag === 'input' && secretField(el)) {
      // Passwords go to the website, never through the model. (The chips drawn before one are
      // not its value: Selectize's search field says autocomplete="new-password" to keep the
      // browser's autofill away.)
      const chips = el.value ? '' : chipsBefore(el);
      parts.push(el.value ? '(filled)' : chips ? quoted(chips, VALUE_LIMIT) : '(empty)');
    } else if (kind === 'input' || kind.startsWith('input:') || kind === 'textarea' || kind === 'editable') {
      let value = tag === 'input' || tag === 'textarea' ? el.value : el.innerText.trim();
      if (editors.has(el)) value = editorText(editors.get(el));
      if (!value && tag === 'input') value = chipsBefore(el);
      if (!value && tag === 'input' && el.getAttribute('role') === 'combobox') value = drawnUnder(el);
      // Every chosen file's name (value holds the first one's only, behind a fake path).
      if (el.type === 'file') value = itemsOf(el.files || []).map((file) => file.name).join(', ');
      parts.push(value ? quoted(value, VALUE_LIMIT) : '(empty)');
    }
    if (kind === 'slider') {
      const value = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow')
        || (sliderFor.has(el) ? sliderFor.get(el).value : '');
      if (value) parts.push(quoted(value, VALUE_LIMIT));
    }
    if (el.getAttribute('aria-selected') === 'true') {
      if (!onlyUnderTheKeys(el)) parts.push('(selected)');
    } else if (!TOGGLE_KINDS.has(kind) && !isFieldKind(kind) && !el.hasAttribute('aria-selected')
      && !el.hasAttribute('aria-current') && !el.hasAttribute('aria-pressed') && chosenByClass(el)) {
      parts.push(kind === 'link' ? '(current)' : '(selected)');
    }
    // A toggle button (bold, a view's filter) says whether it is on; a link, whether it is the
    // page (or step) the site is on.
    const pressed = el.getAttribute('aria-pressed');
    if (pressed === 'true' || pressed === 'false' || pressed === 'mixed') {
      parts.push({ true: '(pressed)', false: '(not pressed)', mixed: '(partly pressed)' }[pressed]);
    }
    const current = el.getAttribute('aria-current');
    if (current && current !== 'false') parts.push('(current)');
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true' || expanded === 'false') {
      parts.push(expanded === 'true' ? '(expanded)' : '(collapsed)');
    } else if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      parts.push(el.parentElement.open ? '(expanded)' : '(collapsed)');
    }
    if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true'
      || (!isFieldKind(kind) && !el.hasAttribute('aria-disabled') && disabledByClass(el))) parts.push('(disabled)');
    // A field that takes no typing, filled by the page from a picker it opens (flatpickr's date
    // field, as Panel draws it) or by its own code.
    else if ((kind.startsWith('input') || kind === 'textarea' || kind === 'editable')
      && (el.readOnly || el.getAttribute('aria-readonly') === 'true')) parts.push('(read-only)');
    const invalid = invalidity(el);
    if (invalid !== null) parts.push(invalid ? '(invalid: ' + cut(invalid, LABEL_LIMIT) + ')' : '(invalid)');
    return parts.join(' ');
  };

  const readable = (read) => {
    try { return read(); } catch (_) { return ''; }
  };
  // What a tap at (x, y) of the top page lands on, through open shadow roots and same-origin
  // frames, as the browser's own hit test finds it (the prototypes' methods: see QUERY_ALL).
  const hitAt = (x, y) => {
    let hit = Document.prototype.elementFromPoint.call(document, x, y);
    for (let depth = 0; hit && depth < 32; depth += 1) {
      if (hit.shadowRoot) {
        const inner = ShadowRoot.prototype.elementFromPoint.call(hit.shadowRoot, x, y);
        if (inner && inner !== hit) { hit = inner; continue; }
      }
      if (hit.localName !== 'iframe' && hit.localName !== 'frame') return hit;
      const inner = frameInside(hit, { x: 0, y: 0, clip: null });
      if (!inner) return hit;
      const next = Document.prototype.elementFromPoint.call(inner.doc, x - inner.x, y - inner.y);
      if (!next) return hit;
      // The frame's coordinates from here on: its elements answer in them.
      x -= inner.x;
      y -= inner.y;
      hit = next;
    }
    return hit;
  };
  // `node` is `root` or inside it, across shadow roots and frames.
  const within = (node, root) => {
    for (let n = node; n; n = n.parentNode || n.host || (n.defaultView && n.defaultView.frameElement)) {
      if (n === root) return true;
    }
    return false;
  };
  // What lies over `target` at (x, y), where a tap on it lands (a dialog, a cookie banner, a
  // sticky bar); null when the tap reaches it, or its <label> that passes the tap on to it.
  const coverAt = (target, x, y) => {
    const hit = hitAt(x, y);
    if (!hit || within(hit, target) || within(target, hit)) return null;
    const label = hit.closest && hit.closest('label');
    return label && label.control === target ? null : hit;
  };
  // A cover said in a few words: its dialog's text, its open popup's (a date picker's
  // calendar, its month and days, not the one day "9" that lies over a button), or its own.
  const DIALOGS = 'dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]';
  const describe = (hit) => {
    // A backdrop is often the dialog's sibling, not inside it (Shoelace's, Ionic's): the
    // dialog beside it is what covers.
    const beside = () => itemsOf(allIn(hit.parentNode, DIALOGS)).find((dialog) => visibleByCss(dialog));
    const popup = popups.find(({ box }) => within(hit, box));
    const cover = (hit.closest && hit.closest(DIALOGS)) || (hit.parentNode && readable(beside))
      || (popup && popup.box) || hit;
    // Its words as the page wrote them (not upper-cased by CSS), as elements are named; a
    // <select> in a popup (a calendar's month) by what it shows, not its every option.
    const shown = () => itemsOf(allIn(cover, 'select')).reduce((text, select) => text.replace(select.innerText,
      ` ${select.selectedOptions[0] ? select.selectedOptions[0].text : ''} `), wordsOf(cover));
    const words = collapse(readable(shown)) || collapse(readable(() => labelOf(cover, '')));
    return words ? cut(words, LABEL_LIMIT) : '<' + cover.localName + '>';
  };
  // What a listing marks covered lies under something fixed over the view's middle (a dialog's
  // backdrop, a modal <dialog>), which stays over it when a click scrolls it to the middle. A
  // bar fixed at an edge is scrolled past, and anything else over an element is found when a
  // click resolves it. (A hit test walks the page's layers: 0.5 ms each on a page of 2000
  // positioned buttons, so elements are hit-tested only when there is such an overlay.)
  const pinned = (el) => {
    const position = getComputedStyle(el).position;
    if (position === 'fixed' || position === 'sticky') return true;
    // Placed on a page fixed to the view (Ionic's overlays: absolute in a fixed <body>).
    const page = position === 'absolute' && el.offsetParent;
    return !!page && (page === document.body || page === document.documentElement)
      && getComputedStyle(page).position === 'fixed';
  };
  // A web component's dialog is fixed inside its shadow root, under a host that is not:
  // the shadow roots at the middle are looked into too.
  const overlays = readable(() => {
    const found = [];
    const seen = new Set();
    const look = (root) => {
      seen.add(root);
      const at = (root.nodeType === 9 ? Document : ShadowRoot).prototype.elementsFromPoint
        .call(root, viewWidth / 2, viewHeight / 2);
      for (const el of at) {
        if (el === document.documentElement || el === document.body) continue;
        if (pinned(el) && !found.includes(el)) found.push(el);
        if (el.shadowRoot && !seen.has(el.shadowRoot)) look(el.shadowRoot);
      }
    };
    look(document);
    return found;
  }) || [];
  const underOverlay = (target, x, y) => {
    const cover = coverAt(target, x, y);
    for (let n = cover; n && n.nodeType === 1; n = n.parentElement || n.getRootNode().host) {
      if (pinned(n)) return overlays.includes(n);
    }
    return false;
  };
  // An open popup floats over what is laid out under it, which a tap there would miss: each
  // element whose tap point lies within one, and is not its own or what opened it, is
  // hit-tested there. (Only those: a popup is small, and a hit test is not free.)
  const underPopup = (target, x, y) => popups.some(({ box, rect }) => {
    if (x < rect.left || x > rect.right || y < rect.top || y > rect.bottom) return false;
    if (within(target, box) || within(box, target)) return false;
    const cover = coverAt(target, x, y);
    return !!cover && within(cover, box);
  });
  // Where resolve.js taps: the centre of the part of the element in view (and in its frame's).
  const tapPoint = (box, clip) => {
    const area = clip || { left: 0, top: 0, right: viewWidth, bottom: viewHeight };
    const left = Math.max(box.left, area.left, 0);
    const top = Math.max(box.top, area.top, 0);
    const right = Math.min(box.right, area.right, viewWidth);
    const bottom = Math.min(box.bottom, area.bottom, viewHeight);
    return { x: (left + right) / 2, y: (top + bottom) / 2 };
  };

  // A slider's title that shows its value (Bokeh's and Panel's "Quantity: 3") names it less
  // that value, which is said apart: a name that changed as it moved would not be found again.
  const withoutValue = (label, el) => {
    const value = el.getAttribute('aria-valuenow') || (sliderFor.has(el) ? sliderFor.get(el).value : '');
    const titled = /^(.*?\S)\s*[:=]\s*(-?\d+(?:\.\d+)?)$/.exec(label);
    return titled && value !== '' && Number(titled[2]) === Number(value) ? titled[1] : label;
  };
  const elements = listed.map((item, index) => {
    const { x, y } = tapPoint(item.box, item.clip);
    const state = readable(() => stateOf(item.el, item.kind));
    const covered = (overlays.length > 0 && readable(() => underOverlay(item.target, x, y)))
      || (popups.length > 0 && readable(() => underPopup(item.target, x, y)));
    return {
      n: index + 1,
      label: item.kind === 'slider' ? withoutValue(labelOf(item.el, item.kind), item.el) : labelOf(item.el, item.kind),
      kind: item.kind,
      href: readable(() => hrefOf(item.el, item.kind)),
      state: covered ? (state ? state + ' (covered)' : '(covered)') : state,
    };
  });

  // Elements listed alike (each row's "Delete", each todo's "×", each card's "Read more") are
  // told apart by the words of their own row: the largest box around each that holds no other
  // of them, as a person reads which row a button is on. Said as a state, which every reply
  // (text, JSON, MCP) carries.
  readable(() => {
    const alike = new Map();
    elements.forEach((element, index) => {
      const key = [element.kind, element.label, element.href].join('\u0000');
      if (!alike.has(key)) alike.set(key, []);
      alike.get(key).push(index);
    });
    const counted = (values) => {
      const count = new Map();
      for (const value of values) count.set(value, (count.get(value) || 0) + 1);
      return count;
    };
    // The names many listed controls bear (each model's "Add", to its own address). (Not two:
    // a table's column is named by its sort link and by its facet's, Datasette's "item".)
    const named = counted(elements.map(({ label }) => label).filter(Boolean));
    const repeatedLabels = new Set([...named].filter(([, count]) => count > 2).map(([label]) => label));
    for (const indexes of alike.values()) {
      if (indexes.length < 2) continue;
      // How many of them each box around them holds.
      const holds = new Map();
      for (const index of indexes) {
        for (let n = listed[index].el; n; n = parentOf(n)) holds.set(n, (holds.get(n) || 0) + 1);
      }
      // Each one's row, and the words that row says besides its buttons.
      const rows = indexes.map((index) => {
        const el = listed[index].el;
        let row = el;
        // The row a person reads it on, where one is inside that box: a table's row or a list's
        // item, not everything around it up to where the others are (a changelist's row, not
        // the whole list beside the message that names the same object).
        let nearestRow = null;
        // Nor past the menu it is in: a link in a site's navigation is told by which one (its
        // name, Material for MkDocs' "Tabs" and "Navigation"), not by the article beside it.
        let menu = null;
        for (let up = parentOf(row); up && holds.get(up) === 1 && up !== document.body; up = parentOf(up)) {
          row = up;
          if (!nearestRow && up.matches && up.matches(ROWS)) nearestRow = up;
          if (up.matches && up.matches(MENUS)) {
            menu = up;
            break;
          }
        }
        const menuName = menu ? collapse(menu.getAttribute('aria-label')
          || textOfIds(menu, menu.getAttribute('aria-labelledby'))) : '';
        // A row of buttons alone (a chat message's "Copy message" under it, Gradio's: each
        // message and its buttons side by side in one list) is about what comes just before it.
        // (Not fields alike, which nothing names: a form's, whose heading is the whole form's.)
        const before = !isFieldKind(elements[index].kind) && allIn(row, FIELDS).length === 0
          && row.previousElementSibling;
        const read = (withButtons) => (nearestRow && rowWords(nearestRow, el, withButtons))
          || menuName || (row === el ? '' : rowWords(row, el, withButtons))
          || (before && !holds.has(before) ? rowWords(before, el, withButtons) : '');
        return { index, el, read, found: read(false) };
      });
      // Words several of them share tell them apart no better: their rows' buttons are read
      // too, where that tells each apart (Swagger UI's schemas, each "Expand all" beside its
      // model's name, a button, and its type: "object" on most).
      const shared = counted(rows.map(({ found }) => found));
      for (const row of rows) row.withButtons = shared.get(row.found) > 1 ? row.read(true) : row.found;
      const apart = counted(rows.map(({ withButtons }) => withButtons));
      for (const { index, el, found: besidesButtons, withButtons } of rows) {
        const found = apart.get(withButtons) === 1 ? withButtons : besidesButtons;
        // Words that are only the name of another control listed alike on many rows tell
        // nothing (Django's sidebar: "Books" beside its "Add", as every model is).
        const words = repeatedLabels.has(found) ? '' : found;
        // Alike in one row of a table (its filter row's fields, each column's): its column.
        const element = elements[index];
        const column = !words && columnWords(el);
        if (!words && (!column || column === element.label)) continue;
        const said = words ? '(in "' + words.replace(/"/g, "'") + '")'
          : '(in column "' + cut(column, ROW_WORDS).replace(/"/g, "'") + '")';
        element.state = element.state ? element.state + ' ' + said : said;
      }
    }
  });
  // A chip's remover ("Remove", "×") says which chip it removes, where nothing else did (its
  // name, "Remove Tools", or its row).
  readable(() => {
    elements.forEach((element, index) => {
      const words = chipOf.get(listed[index].el);
      if (!words || element.state.includes('(in "') || element.label.includes(words)) return;
      const said = '(in "' + cut(words, ROW_WORDS).replace(/"/g, "'") + '")';
      element.state = element.state ? element.state + ' ' + said : said;
    });
  });
  // Where the keyboard's focus is (what Tab moved): the element holding it, found through
  // open shadow roots and same-origin frames, then the listed element that is it or holds it
  // (its n), nothing but the page itself (0), or an element not listed (-1).
  const focused = readable(() => {
    const pageItself = (el) => !el || el.localName === 'body' || el.localName === 'html';
    let active = document.activeElement;
    for (let depth = 0; !pageItself(active) && depth < 32; depth += 1) {
      const inner = (active.shadowRoot && active.shadowRoot.activeElement)
        || (['iframe', 'frame'].includes(active.localName) && readable(() => active.contentDocument.activeElement));
      if (pageItself(inner)) break;
      active = inner;
    }
    if (pageItself(active)) return 0;
    const numbers = new Map();
    listed.forEach((item, index) => {
      numbers.set(item.el, index + 1);
      numbers.set(item.target, index + 1);
    });
    const outward = (node) => parentOf(node) || readable(() => node.ownerDocument.defaultView.frameElement) || null;
    for (let node = active; node; node = outward(node)) {
      if (numbers.has(node)) return numbers.get(node);
    }
    return -1;
  }) || 0;
  // Not enumerable, so the page's own code that walks window's properties does not trip on it.
  Object.defineProperty(window, '__nanomuseListing', {
    value: {
      id: listingId,
      elements: listed.map((item) => item.target),
      // What typing into an element focuses: the field itself, not the editor drawn for it.
      fields: listed.map((item) => item.el),
      // For fill_focused.js: the editor a focused field types into, if it is one's.
      editorOf: (field) => readable(() => editorOf(field)),
      details: elements.map(({ label, kind }) => ({ label, kind })),
      // For resolve.js: the label a person reads for a toggle (tied to it, or beside it), where
      // a double-click on it goes.
      labelOfToggle: (field) => readable(() => (field.labels && field.labels[0]) || untiedLabelBeside(field)) || null,
      // For page_text.js: a field named as the listing names it, listed or not (extract's
      // "What its fields hold" reads as the listing does).
      nameOf: (field) => readable(() => labelOf(field, kindOf(field) || 'input')) || '',
      // For resolve.js: what holds the focus a field was refused, in words.
      describe: (el) => readable(() => describe(el)),
      // For resolve.js: what lies over an element where it is about to be tapped, in words.
      coveredBy: (target, x, y) => readable(() => {
        const cover = coverAt(target, x, y);
        return cover && describe(cover);
      }),
    },
    configurable: true,
    writable: true,
  });
  // What the page's JavaScript dialogs said since the last listing (dialog_said.js), taken:
  // each is reported once.
  const said = readable(() => {
    let stored = [];
    try {
      stored = JSON.parse(sessionStorage.getItem('__nanomuseSaid') || '[]');
      if (stored.length) sessionStorage.removeItem('__nanomuseSaid');
    } catch (_) { /* no storage: the window's alone */ }
    const kept = (Array.isArray(stored) ? stored : []).concat(window.__nanomuseSaid || []);
    delete window.__nanomuseSaid;
    return Array.isArray(kept) ? kept.map((entry) => ({
      kind: String(entry.kind),
      message: cut(collapse(entry.message), 300),
      answer: cut(String(entry.answer), 100),
    })) : [];
  }) || [];
  // The modal dialog open in view, the last one opened over the others: its title and what it
  // says beside its controls (an app's "Confirm booking: Ada to Rome on …", "Delete 3 files?"),
  // which its buttons alone ("Cancel", "OK") do not.
  // Shown in the view: what a dialog or an alert must be to be said.
  const shownInView = (box) => overlaps(box.getBoundingClientRect(), { left: 0, top: 0, right: viewWidth, bottom: viewHeight })
    && visibleByCss(box) && !clippedAway(box);
  // What a box says beside its controls, less what titles it and its fields' labels (a form
  // in a dialog, Flask-Admin's "Create New Record": the fields listed say those). A link's
  // words are part of what it says (Django's "The tag “news” was added successfully.", the
  // tag's name a link to it).
  const CONTROLS_BUT_LINKS = CONTROLS.split(', ').filter((control) => !['a[href]', '[role="link"]'].includes(control)).join(', ');
  // (Not what it hides from screen readers: an icon's ligature, Quasar's notification's
  // "warning".)
  const saysBesideControls = (box, titling) => textAround(box, titling || box.ownerDocument.createElement('i'),
    CONTROLS_BUT_LINKS, `${NOT_WORDS}, label, [aria-hidden="true"]`)
    // (Its pieces are read apart: no space is left inside quotes and brackets around a link.)
    .replace(/([“‘"'(\[«]) /g, '$1').replace(/ ([”’"')\]».,;:!?])/g, '$1');
  const dialogBox = readable(() => {
    const open = [document, ...shadowRoots]
      .flatMap((root) => itemsOf(allIn(root, DIALOGS)))
      .filter((box) => (box.getAttribute('aria-modal') === 'true'
          || (box.getAttribute('role') === 'alertdialog' && box.getAttribute('aria-modal') !== 'false')
          || (box.localName === 'dialog' && box.matches(':modal'))) && shownInView(box));
    return open[open.length - 1] || null;
  });
  const dialog = dialogBox && readable(() => {
    const box = dialogBox;
    const labelledBy = (box.getAttribute('aria-labelledby') || '').trim();
    const root = box.getRootNode();
    // What titles it, whose words are its title and not what it says.
    const titling = (labelledBy && root.getElementById && root.getElementById(labelledBy.split(/\s+/)[0]))
      || box.querySelector('h1, h2, h3, h4, h5, h6, [role="heading"]');
    const title = collapse(box.getAttribute('aria-label') || (labelledBy && textOfIds(box, labelledBy))
      || (titling && titling.innerText));
    return { title: cut(title, LABEL_LIMIT), text: cut(saysBesideControls(box, titling), DIALOG_TEXT_LIMIT) };
  }) || null;
  // What the page announces as important in view (`role=alert`: a sign-in's "Wrong password",
  // a toast asking a question), which a screen reader speaks and its buttons alone do not say:
  // what each says beside its controls, a few at most. One a field's (invalid: …) state
  // already says, or inside the dialog said above, is not said again; one the open dialog
  // (or its backdrop) lies over is the page's under it, which the dialog holds back.
  const underDialog = (box) => {
    const { x, y } = tapPoint(box.getBoundingClientRect(), null);
    return !!coverAt(box, x, y);
  };
  // Besides role=alert, the boxes two common conventions mark as messages by class alone:
  // Bootstrap's `.alert` (Flask-Admin's "Record was successfully saved.") and Django's admin's,
  // its messages framework's list (`.messagelist`'s items) and its forms' own errors
  // (`.errornote`: a sign-in's "Please enter the correct username and password…").
  const ALERTS = '[role="alert"], .alert, .messagelist > li, .errornote';
  // And a status a page draws (Streamlit's success and info boxes: role=status), or an alert
  // dialog that says it holds nothing back (Streamlit's toast: aria-modal=false); not a status
  // only screen readers hear (a spinner's clipped "Loading…", a count of results).
  const STATUSES = '[role="status"], [role="alertdialog"][aria-modal="false"]';
  const drawnWords = (box) => {
    const walker = box.ownerDocument.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.trim() && !readersOnlyBelow(node.parentElement, box.parentElement)) return true;
    }
    return false;
  };
  // A notification floating over the page that says nothing to screen readers, told by its
  // class (Shiny's "shiny-notification", a "toast", a "snackbar"), is said as one too.
  const NOTICES = '[class*="notification" i], [class*="toast" i], [class*="snackbar" i]';
  const NOTICE_CLASS = /(^|[-_])(notification|toast|snackbar)$/i;
  const notice = (box) => itemsOf(box.classList).some((token) => NOTICE_CLASS.test(token)) && !!floating(box);
  const alerts = readable(() => {
    // (Only their invalid states: an alert's link listed alike elsewhere says the alert's
    // words as the row it is on.)
    const states = elements.map((element) => element.state).filter((state) => state.includes('(invalid: ')).join(' ');
    const said = [];
    const boxes = [document, ...shadowRoots].flatMap((root) => itemsOf(allIn(root, `${ALERTS}, ${NOTICES}, ${STATUSES}`)))
      .filter((box) => box.matches(ALERTS) || (box.matches(STATUSES) ? drawnWords(box) : notice(box)));
    for (const box of boxes) {
      if (said.length >= ALERTS_SAID) break;
      if (!shownInView(box) || (dialogBox && (within(box, dialogBox) || underDialog(box)))) continue;
      // (Less a mark drawn at either end to close it: Shiny's "×" is no button.)
      const text = cut(saysBesideControls(box, null).replace(/^[^\p{L}\p{N}\s]+\s+|\s+[^\p{L}\p{N}\s]+$/gu, ''),
        ALERT_TEXT_LIMIT);
      if (text && !states.includes(text) && !said.includes(text)) said.push(text);
    }
    return said;
  }) || [];
  // So that `scroll` can say how far it went, whichever box it moved.
  const scrolled = Math.round(scrolledInAll);
  return {
    url: location.href, title: document.title, elements, above, below, past_max: pastMax, said, scrolled, dialog, alerts,
    // Which document this is: another at the same address is the page loaded again.
    document: performance.timeOrigin,
    focused,
  };
}
