//! The controller end to end, over real sockets: a controller, two workers, real Chromium, pages
//! served on 127.0.0.1. What an agent sees of the browser tool.

use std::time::Duration;

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;

/// A controller with two registered workers, `w1` and `w2`.
struct Fleet {
    controller: ControllerProcess,
    workers: Vec<Worker>,
    dir: tempfile::TempDir,
}

impl Fleet {
    async fn start(capacity: u32) -> Self {
        Self::start_with(capacity, |_| {}).await
    }

    async fn start_with(capacity: u32, tune: impl Fn(&mut nanomuse_controller::Config)) -> Self {
        logs();
        let dir = tempfile::tempdir().unwrap();
        let mut config = controller_config(&dir.path().join("controller"));
        tune(&mut config);
        let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
        let mut workers = Vec::new();
        for name in ["w1", "w2"] {
            let profiles = dir.path().join(name);
            let config = registered_worker_config(&profiles, name, controller.address, capacity);
            workers.push(Worker::start(config).await);
        }
        controller.wait_for_workers(&["w1", "w2"]).await;
        Self {
            controller,
            workers,
            dir,
        }
    }

    async fn stop(self) {
        self.controller.stop().await;
        for worker in self.workers {
            worker.stop().await;
        }
    }
}

async fn navigate(tool: &mut Tool, thread: &str, url: String) -> ActReply {
    acted(tool, act(thread, Action::Navigate(NavigateAction { url }))).await
}

async fn click(tool: &mut Tool, thread: &str, n: i64) -> ActReply {
    acted(
        tool,
        act(
            thread,
            Action::Click(ClickAction {
                n,
                ..Default::default()
            }),
        ),
    )
    .await
}

async fn type_into(tool: &mut Tool, thread: &str, n: i64, text: &str) -> ActReply {
    let text = text.into();
    acted(tool, act(thread, Action::Type(TypeAction { n, text }))).await
}

async fn extract(tool: &mut Tool, thread: &str) -> ActReply {
    acted(tool, act(thread, Action::Extract(ExtractAction {}))).await
}

#[tokio::test(flavor = "multi_thread")]
async fn navigate_lists_the_interactive_elements_numbered() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let reply = navigate(&mut tool, "t1", format!("http://{site}/page")).await;
    assert_eq!(reply.title, "Test page");
    assert!(reply.url.ends_with("/page"));
    let labels: Vec<_> = reply
        .elements
        .iter()
        .map(|e| (e.n, e.kind.as_str(), e.label.as_str()))
        .collect();
    assert_eq!(labels[0], (1, "button", "Press"), "{labels:?}");
    let next = reply
        .elements
        .iter()
        .find(|e| e.label == "Next")
        .expect("the link is listed");
    assert_eq!(next.kind, "link");
    assert_eq!(next.href, format!("http://{site}/second"));
    assert!(
        reply.text.contains("[1] button \"Press\""),
        "{}",
        reply.text
    );
    let frame = reply.frame.expect("navigate makes a frame");
    assert_eq!((frame.width, frame.height), (1280, 900));
    assert!(reply.backend.starts_with("worker:"));
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn click_follows_a_link_and_a_login_by_click_and_type_is_sent_by_fetch() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;

    let page = navigate(&mut tool, "t", format!("http://{site}/page")).await;
    let clicked = click(&mut tool, "t", element(&page, "Next")).await;
    assert!(clicked.url.ends_with("/second"), "{}", clicked.url);
    assert!(
        clicked.text.starts_with("Clicked 'Next' → now at"),
        "{}",
        clicked.text
    );

    let login = navigate(&mut tool, "t", format!("http://{site}/login")).await;
    let inputs: Vec<i64> = login
        .elements
        .iter()
        .filter(|e| e.kind.starts_with("input"))
        .map(|e| e.n as i64)
        .collect();
    assert_eq!(inputs.len(), 2, "{:#?}", login.elements);
    type_into(&mut tool, "t", inputs[0], "ada").await;
    let typed = type_into(&mut tool, "t", inputs[1], "s3cret").await;
    assert!(
        !typed.text.contains("s3cret"),
        "a typed secret never comes back: {}",
        typed.text
    );
    let submitted = click(&mut tool, "t", element(&typed, "Sign in")).await;
    assert!(submitted.url.ends_with("/account"), "{}", submitted.url);
    assert!(extract(&mut tool, "t").await.text.contains("ada"));

    let fetched = tool
        .act(act(
            "t",
            Action::Fetch(FetchAction {
                url: format!("http://{site}/api/whoami"),
                ..Default::default()
            }),
        ))
        .await
        .unwrap()
        .into_inner();
    let result = fetched.fetch.expect("fetch result");
    assert_eq!(result.status, 200);
    assert_eq!(result.body, r#"{"user":"ada"}"#);
    assert!(fetched.frame.is_none(), "fetch changes no page");
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn type_fills_react_and_vue_inputs_so_their_state_changes() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    for fixture in ["react.html", "vue.html"] {
        let page = navigate(&mut tool, "f", format!("http://{site}/fixtures/{fixture}")).await;
        let n = element(&page, "Your name");
        type_into(&mut tool, "f", n, "Grace Hopper").await;
        let text = extract(&mut tool, "f").await.text;
        assert!(text.contains("state:Grace Hopper"), "{fixture}: {text}");
    }
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn type_into_a_select_chooses_the_option_its_label_names_or_says_which_there_are() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "s",
        format!("http://{site}/fixtures/choose.html"),
    )
    .await;
    let author = element(&page, "Author");

    // A click opens a list that no picture shows: the reply names the choices, the disabled
    // one left out.
    let clicked = click(&mut tool, "s", author).await;
    assert!(
        clicked.text.starts_with(&format!(
            "Clicked 'Author'. Its options: \"---------\", \"Ursula K. Le Guin\", \
             \"Ursula Vernon\", \"Octavia E. Butler\"; typing one into [{author}] chooses it."
        )),
        "{}",
        clicked.text
    );

    // The whole label, in any case and spacing: the option behind it, whatever its value.
    let chosen = type_into(&mut tool, "s", author, "ursula  k. LE GUIN").await;
    // Said as the select shows it.
    assert!(
        chosen
            .text
            .starts_with("Chose \"Ursula K. Le Guin\" in 'Author'.\n"),
        "{}",
        chosen.text
    );
    assert!(
        chosen
            .text
            .contains("select \"Author\" = \"Ursula K. Le Guin\""),
        "{}",
        chosen.text
    );
    assert!(extract(&mut tool, "s").await.text.contains("author:17"));
    // The value behind an option, which no label starts with.
    let by_value = type_into(&mut tool, "s", author, "23").await;
    assert!(
        by_value
            .text
            .starts_with("Chose \"Ursula Vernon\" in 'Author'.\n"),
        "{}",
        by_value.text
    );
    // The start of one label.
    type_into(&mut tool, "s", author, "octavia").await;
    let text = extract(&mut tool, "s").await.text;
    assert!(text.contains("author:31"), "{text}");
    // The page's text reads a dropdown as the option it shows, not as all of its options.
    assert!(
        text.contains("Octavia E. Butler") && text.contains("Science fiction"),
        "{text}"
    );
    assert!(
        !text.contains("Ursula") && !text.contains("Fantasy"),
        "{text}"
    );

    // Two labels start so, and a disabled option is no choice: nothing changes, and the
    // error says what there is to choose.
    for (typed, says) in [
        (
            "Ursula",
            "the text matches 2 options of this select: \"Ursula K. Le Guin\", \"Ursula Vernon\"; \
             type one of them whole",
        ),
        (
            "Isaac Asimov",
            "no option of this select matches the text; its options: \"---------\", \
             \"Ursula K. Le Guin\", \"Ursula Vernon\", \"Octavia E. Butler\"",
        ),
    ] {
        let refused = tool
            .act(act(
                "s",
                Action::Type(TypeAction {
                    n: author,
                    text: typed.into(),
                }),
            ))
            .await
            .expect_err(typed);
        assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{typed}");
        assert!(
            refused.message().contains(says),
            "{typed}: {}",
            refused.message()
        );
        assert!(extract(&mut tool, "s").await.text.contains("author:31"));
    }

    // A page's own change handler hears the choice.
    let listed = navigate(
        &mut tool,
        "s",
        format!("http://{site}/fixtures/choose.html"),
    )
    .await;
    type_into(&mut tool, "s", element(&listed, "Shelf"), "fant").await;
    assert!(extract(&mut tool, "s").await.text.contains("shelf:b2"));
    fleet.stop().await;
}

/// A click after which the page is loaded again at its address (a form posted back to itself,
/// a reload) says so, though its address and title are the same; one that changes the page in
/// place says the click alone (with the row its button was told apart by).
#[tokio::test(flavor = "multi_thread")]
async fn a_click_that_loads_the_page_again_at_its_address_says_so() {
    let site = serve_site().await;
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(&mut tool, "r", format!("http://{site}/fixtures/rows.html")).await;
    let reloaded = click(&mut tool, "r", element(&page, "Reload")).await;
    assert!(
        reloaded.text.starts_with(
            "Clicked 'Reload' → the page loaded again at the same address: `extract` reads what \
             it says now.\n"
        ),
        "{}",
        reloaded.text
    );
    let deleted = click(&mut tool, "r", element(&reloaded, "Delete")).await;
    assert!(
        deleted
            .text
            .starts_with("Clicked 'Delete' (in \"Fern 2\").\n"),
        "{}",
        deleted.text
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn web_components_are_listed_named_and_read_through_their_shadow_roots_and_slots() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "w",
        format!("http://{site}/fixtures/components.html"),
    )
    .await;
    // Named through slots; a field transparent until focused and a select's clipped button,
    // each drawn by its label; the toggle that is its host listed once.
    for line in [
        "input \"Full name\" (empty)",
        "checkbox \"I accept the terms\" (unchecked)",
        "switch \"Gift wrap\" (unchecked)",
        "button \"Fruit\" (collapsed)",
        "button \"Send order\"",
    ] {
        assert!(page.text.contains(line), "{line}: {}", page.text);
    }
    let kinds: Vec<&str> = page.elements.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["input", "checkbox", "switch", "button", "button"],
        "{}",
        page.text
    );
    type_into(&mut tool, "w", element(&page, "Full name"), "Ada").await;
    // The focus is found through shadow roots: the field inside one, then the next control.
    let key = |key: &str| act("w", Action::Key(KeyAction { key: key.into() }));
    let back = acted(&mut tool, key("Shift+Tab")).await;
    let tabbed = acted(&mut tool, key("Tab")).await;
    assert!(
        tabbed
            .text
            .starts_with("Pressed Tab. The focus is on [1] input \"Full name\" = \"Ada\"."),
        "{}\n(after {})",
        tabbed.text,
        back.text
    );
    let tabbed = acted(&mut tool, key("Tab")).await;
    assert!(
        tabbed
            .text
            .starts_with("Pressed Tab. The focus is on [2] checkbox \"I accept the terms\""),
        "{}",
        tabbed.text
    );
    click(&mut tool, "w", element(&page, "I accept the terms")).await;
    let wrapped = click(&mut tool, "w", element(&page, "Gift wrap")).await;
    assert!(
        wrapped.text.contains("switch \"Gift wrap\" (checked)"),
        "{}",
        wrapped.text
    );

    // The menu fades in and out in the shadow root: listed once it has come, gone once it went.
    let menu = click(&mut tool, "w", element(&page, "Fruit")).await;
    assert!(menu.text.contains("menuitem \"Banana\""), "{}", menu.text);
    let chosen = click(&mut tool, "w", element(&menu, "Banana")).await;
    assert!(
        !chosen.elements.iter().any(|e| e.kind == "menuitem"),
        "the faded menu is not listed: {}",
        chosen.text
    );

    // The dialog in the shadow root covers the page; a tap under it names the dialog.
    let dialog = click(&mut tool, "w", element(&page, "Send order")).await;
    assert!(
        dialog
            .text
            .contains("input \"Full name\" = \"Ada\" (covered)")
            && dialog.text.contains("button \"Yes, send\"\n"),
        "{}",
        dialog.text
    );
    let refused = tool
        .act(act(
            "w",
            Action::Click(ClickAction {
                n: element(&dialog, "Full name"),
                ..Default::default()
            }),
        ))
        .await
        .expect_err("a field under the dialog is not tapped");
    assert!(
        refused
            .message()
            .contains("('Really send it? Yes, send Cancel')"),
        "{}",
        refused.message()
    );
    let sent = click(&mut tool, "w", element(&dialog, "Yes, send")).await;
    assert!(
        !sent.elements.iter().any(|e| e.label == "Yes, send") && !sent.text.contains("(covered)"),
        "the dialog faded out before the listing: {}",
        sent.text
    );

    // Text drawn in a shadow root, a moment later: waited for, and read.
    let waited = acted(
        &mut tool,
        act(
            "w",
            Action::Wait(WaitAction {
                seconds: 5.0,
                text: "Thank you, Ada".into(),
            }),
        ),
    )
    .await;
    assert!(!waited.text.contains("did not appear"), "{}", waited.text);
    let text = extract(&mut tool, "w").await.text;
    for words in [
        "Order summary",
        "Slotted words",
        "Sent: Ada, Banana, terms, wrapped",
        "Thank you, Ada, Banana, terms, wrapped",
        "Send order",
        "def f(n):\n    return n  +  1",
    ] {
        assert!(text.contains(words), "{words}: {text}");
    }
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn controls_kits_draw_are_listed_as_what_they_are_and_chosen_in_by_typing() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(&mut tool, "k", format!("http://{site}/fixtures/kits.html")).await;
    let lines: Vec<&str> = page.text.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "[1] select \"Country\" = \"Choose a country\" (collapsed)",
            "[2] select \"City\" (empty) (collapsed)",
            "[3] slider \"Quantity\" = \"3\"",
            "[4] input:email \"Email\" (empty)",
            "[5] input \"Nickname\" (empty) (invalid: Nickname is taken)",
            "[6] button \"Send\"",
            "[7] clickable \"Profile\"",
            "[8] checkbox \"Dark mode\" (unchecked)",
            "[9] select \"Carrier\" = \"DHL\" (collapsed)",
            "[10] clickable \"Sort by\"",
            "[11] input \"When\" (empty)",
            "[12] select \"Author\" = \"(none)\"",
            "[13] select \"Reviewer\" = \"nobody\" (collapsed)",
        ],
        "{}",
        page.text
    );
    // Opened by a press on its box, not on its label apart; its options say no role.
    let chosen = type_into(&mut tool, "k", 1, "ital").await;
    assert!(
        chosen.text.starts_with(
            "Chose the option of 'Country' the text names (a dropdown the page draws: opened, \
             then its option 'Italy' clicked)."
        ) && chosen
            .text
            .contains("[1] select \"Country\" = \"Italy\" (collapsed)"),
        "{}",
        chosen.text
    );
    let chosen = type_into(&mut tool, "k", 2, "lille").await;
    assert!(
        chosen
            .text
            .contains("[2] select \"City\" = \"Lille\" (collapsed)"),
        "{}",
        chosen.text
    );
    let refused = tool
        .act(act(
            "k",
            Action::Type(TypeAction {
                n: 3,
                text: "5".into(),
            }),
        ))
        .await
        .expect_err("a slider takes keys, not text");
    assert!(
        refused
            .message()
            .contains("to move it, click 3, then key ArrowRight or ArrowLeft"),
        "{}",
        refused.message()
    );
    // The browser refuses the form in a bubble no listing sees: the field says why.
    let sent = click(&mut tool, "k", 6).await;
    assert!(
        sent.text
            .contains("[4] input:email \"Email\" (empty) (invalid: "),
        "{}",
        sent.text
    );
    click(&mut tool, "k", 7).await;
    let text = extract(&mut tool, "k").await.text;
    assert!(text.contains("Chosen: Profile"), "{text}");
    // Pressed at the label drawn over it, which the page's script ties to it.
    let dark = click(&mut tool, "k", 8).await;
    assert!(
        dark.text.contains("[8] checkbox \"Dark mode\" (checked)"),
        "{}",
        dark.text
    );
    // A menu whose items say nothing but their pointer.
    let menu = click(&mut tool, "k", 10).await;
    let oldest = element(&menu, "Oldest");
    click(&mut tool, "k", oldest).await;
    // A field read on the key's release.
    type_into(&mut tool, "k", 11, "2027-01-15").await;
    let text = extract(&mut tool, "k").await.text;
    assert!(
        text.contains("Chosen: sorted by Oldest") && text.contains("read 2027-01-15"),
        "{text}"
    );
    // A native select hidden behind a plain box the page draws, which shows its choice.
    let chosen = type_into(&mut tool, "k", 12, "butler").await;
    assert!(
        chosen.text.contains("[12] select \"Author\" = \"Butler\""),
        "{}",
        chosen.text
    );
    let text = extract(&mut tool, "k").await.text;
    assert!(text.contains("Chosen: author Butler"), "{text}");
    // One that shows a first page of its options, the rest found by its search.
    let chosen = type_into(&mut tool, "k", 13, "zadie").await;
    assert!(
        chosen.text.starts_with(
            "Chose the option of 'Reviewer' the text names (a dropdown the page draws: opened, \
             the text typed into its search field, then its option 'Zadie Smith' clicked)."
        ) && chosen
            .text
            .contains("[13] select \"Reviewer\" = \"Zadie Smith\" (collapsed)"),
        "{}",
        chosen.text
    );
    let refused = tool
        .act(act(
            "k",
            Action::Type(TypeAction {
                n: 13,
                text: "nobody at all".into(),
            }),
        ))
        .await
        .expect_err("no reviewer is named so");
    assert!(
        refused.message().starts_with(
            "its search for the text found no option (the dropdown [13] 'Reviewer', which the \
             page draws: it was opened, the text typed into its search field, and closed again"
        ),
        "{}",
        refused.message()
    );
    fleet.stop().await;
}

/// Typing into a field that opens its list as one types and takes a value only once an option
/// is pressed (Gradio's dropdown) says which listed option to click, and clicking it chooses.
#[tokio::test(flavor = "multi_thread")]
async fn typing_into_a_combobox_says_which_option_to_click_to_choose() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "c",
        format!("http://{site}/fixtures/combobox.html"),
    )
    .await;
    let typed = type_into(&mut tool, "c", element(&page, "Destination"), "rome").await;
    let rome = element(&typed, "Rome");
    assert!(
        typed.text.starts_with(&format!(
            "Typed 4 characters into 'Destination'; the list it opened offers [{rome}] 'Rome': \
             click {rome} to choose it (typing alone chooses nothing there)."
        )),
        "{}",
        typed.text
    );
    click(&mut tool, "c", rome).await;
    let text = extract(&mut tool, "c").await.text;
    assert!(text.contains("Chosen: Rome"), "{text}");
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn type_into_a_dropdown_the_page_draws_opens_it_and_clicks_the_option_named() {
    // Quasar's and MUI's kind of dropdown, each opening a menu at the end of the page, beside
    // a list box always shown whose options share names with theirs.
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "d",
        format!("http://{site}/fixtures/dropdowns.html"),
    )
    .await;
    // Each listed as what it is, with the value it shows, named by its label alone.
    for line in [
        "select \"Shop\" = \"Grocer\" (collapsed)",
        "select \"City\" = \"Berlin\" (collapsed)",
        "select \"From\" = \"Lisbon\" (collapsed)",
        "select \"Size\" = \"Pick a size\" (collapsed)",
    ] {
        assert!(page.text.contains(line), "{line}: {}", page.text);
    }
    let shop = element(&page, "Shop");
    let city = element(&page, "City");
    let from = element(&page, "From");
    let size = element(&page, "Size");
    let large = type_into(&mut tool, "d", size, "large").await;
    assert!(
        large
            .text
            .contains("select \"Size\" = \"Large\" (collapsed)"),
        "{}",
        large.text
    );
    // The page's line that says what each holds.
    let out = |reply: &ActReply| {
        let line = reply.text.lines().find(|l| l.contains("shop:"));
        line.unwrap_or_default().trim().to_string()
    };
    let menu_listed = |reply: &ActReply| {
        reply
            .elements
            .iter()
            .any(|e| e.kind == "option" && e.label == "Grocer")
    };

    let chosen = type_into(&mut tool, "d", shop, "bakery").await;
    assert!(
        chosen.text.starts_with(
            "Chose the option of 'Shop' the text names (a dropdown the page draws: opened, then \
             its option 'Bakery' clicked)."
        ),
        "{}",
        chosen.text
    );
    assert!(
        chosen.text.contains("select \"Shop\" = \"Bakery\""),
        "{}",
        chosen.text
    );
    assert!(!menu_listed(&chosen), "the menu closed: {}", chosen.text);
    // The list box beside it has an "Oslo" too: the one the opening listed is chosen.
    type_into(&mut tool, "d", city, "OSLO").await;
    let porto = type_into(&mut tool, "d", from, "porto").await;
    assert!(
        porto
            .text
            .contains("select \"From\" = \"Porto\" (collapsed)"),
        "{}",
        porto.text
    );
    assert_eq!(
        out(&extract(&mut tool, "d").await),
        "shop:Bakery city:Oslo from:Porto"
    );
    // The one name that starts with the text, then the one that holds it.
    type_into(&mut tool, "d", shop, "mark").await;
    assert_eq!(
        out(&extract(&mut tool, "d").await),
        "shop:Market city:Oslo from:Porto"
    );
    type_into(&mut tool, "d", shop, "fish").await;
    assert_eq!(
        out(&extract(&mut tool, "d").await),
        "shop:Fish market city:Oslo from:Porto"
    );

    // Text that names no option, or two: nothing chosen, the menu closed again, the options
    // named.
    for (typed, says) in [
        (
            "Butcher",
            "no option matches the text; the options: \"Grocer\", \"Bakery\", \"Market\", \
             \"Fish market\"",
        ),
        (
            "ket",
            "the text matches 2 options: \"Market\", \"Fish market\"; type one of them whole",
        ),
    ] {
        let refused = tool
            .act(act(
                "d",
                Action::Type(TypeAction {
                    n: shop,
                    text: typed.into(),
                }),
            ))
            .await
            .expect_err(typed);
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{typed}");
        assert!(
            refused.message().starts_with(says),
            "{typed}: {}",
            refused.message()
        );
        let now = acted(&mut tool, act("d", Action::Screenshot(ScreenshotAction {}))).await;
        assert!(!menu_listed(&now), "{typed}: {}", now.text);
        assert_eq!(
            out(&extract(&mut tool, "d").await),
            "shop:Fish market city:Oslo from:Porto"
        );
    }

    // An open menu keeps the focus: typing into a field meanwhile is refused, saying what holds
    // it, rather than typed into the menu; the open dropdown is chosen in without a tap on it.
    let opened = click(&mut tool, "d", city).await;
    assert!(
        opened
            .text
            .contains("select \"City\" = \"Oslo\" (expanded)"),
        "{}",
        opened.text
    );
    let note = element(&opened, "Note");
    let refused = tool
        .act(act(
            "d",
            Action::Type(TypeAction {
                n: note,
                text: "hello".into(),
            }),
        ))
        .await
        .expect_err("the menu keeps the focus");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert_eq!(
        refused.message(),
        format!(
            "element {note} ('Note') cannot take the focus: the page keeps it on 'Berlin Lisbon \
             Oslo' (an open menu or dialog: key Escape closes most, or answer it); nothing was \
             typed"
        )
    );
    let city = element(&opened, "City");
    let chosen = type_into(&mut tool, "d", city, "lisbon").await;
    let typed = type_into(&mut tool, "d", element(&chosen, "Note"), "hello").await;
    assert!(
        typed.text.contains("input \"Note\" = \"hello\""),
        "{}",
        typed.text
    );
    assert_eq!(
        out(&extract(&mut tool, "d").await),
        "shop:Fish market city:Lisbon from:Porto"
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_editor_is_listed_with_its_text_and_typing_replaces_that_text() {
    // CodeMirror 5 and Ace, the real ones: each draws its text itself and takes the keyboard
    // through a <textarea> no one sees, whose value is never the editor's text. Beside them a
    // rich-text box, named by its heading, not by its text.
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "e",
        format!("http://{site}/fixtures/editors.html"),
    )
    .await;
    assert!(
        page.text.ends_with(
            "[1] textarea \"SQL query\" = \"select * from books\"\n\
             [2] button \"Run SQL\"\n\
             [3] textarea \"Notes\" = \"first note\"\n\
             [4] editable \"Comment\" = \"Looks good to me\""
        ),
        "{}",
        page.text
    );
    let typed = type_into(
        &mut tool,
        "e",
        element(&page, "SQL query"),
        "select title from books\nwhere year > 1970",
    )
    .await;
    assert!(
        typed
            .text
            .contains("[1] textarea \"SQL query\" = \"select title from books where year > 19…\""),
        "{}",
        typed.text
    );
    type_into(&mut tool, "e", element(&page, "Notes"), "a new note").await;
    let commented = type_into(&mut tool, "e", element(&page, "Comment"), "Ship it").await;
    assert!(
        commented
            .text
            .ends_with("[4] editable \"Comment\" = \"Ship it\""),
        "{}",
        commented.text
    );
    // Each editor holds the text typed, in place of what it held: no line of it before.
    let text = extract(&mut tool, "e").await.text;
    assert!(
        text.contains("query:select title from books where year > 1970 (by paste)\n")
            && text.contains("notes:a new note"),
        "{text}"
    );
    // No text empties an editor, as it does any field.
    type_into(&mut tool, "e", element(&page, "SQL query"), "").await;
    let emptied = type_into(&mut tool, "e", element(&page, "Notes"), "").await;
    assert!(
        emptied.text.contains(
            "[1] textarea \"SQL query\" (empty)\n\
             [2] button \"Run SQL\"\n\
             [3] textarea \"Notes\" (empty)\n"
        ),
        "{}",
        emptied.text
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_is_said_and_what_it_covers_is_listed_as_covered_and_not_tapped_until_it_is_answered()
 {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "c",
        format!("http://{site}/fixtures/covered.html"),
    )
    .await;
    // What the dialog says comes first: its button alone does not say what it accepts. The
    // shop's alert under it is not said.
    assert!(
        page.text.ends_with(&format!(
            "A dialog is open, \"Cookies\": \"We use cookies.\"\n\
             [1] link \"Cart\" (covered) → http://{site}/second\n\
             [2] button \"Buy\" (covered)\n\
             [3] button \"Accept all\""
        )),
        "{}",
        page.text
    );

    // A tap on "Buy" would press the dialog's backdrop: refused, saying what is in the way.
    let refused = tool
        .act(act(
            "c",
            Action::Click(ClickAction {
                n: 2,
                ..Default::default()
            }),
        ))
        .await
        .expect_err("a covered button is not tapped");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused
            .message()
            .starts_with("element 2 is covered: a tap on it would press what lies over it ('We use cookies. Accept all')"),
        "{}",
        refused.message()
    );
    assert!(!extract(&mut tool, "c").await.text.contains("bought"));

    // Answered, the dialog is gone and "Buy" is pressed.
    let answered = click(&mut tool, "c", element(&page, "Accept all")).await;
    assert!(!answered.text.contains("(covered)"), "{}", answered.text);
    assert!(
        !answered.text.contains("A dialog is open"),
        "{}",
        answered.text
    );
    // The shop's alert, under the dialog until then, is the page's to say now.
    assert!(
        answered
            .text
            .contains("An alert says: \"Sale ends today\"\n[1] link \"Cart\""),
        "{}",
        answered.text
    );
    click(&mut tool, "c", element(&answered, "Buy")).await;
    assert!(extract(&mut tool, "c").await.text.contains("bought"));

    // A bar fixed at the view's bottom edge lies over a link only until a click scrolls the
    // link to the middle: not covered, and clicked.
    let page = navigate(&mut tool, "c", format!("http://{site}/fixtures/bar.html")).await;
    assert!(!page.text.contains("(covered)"), "{}", page.text);
    let clicked = click(&mut tool, "c", element(&page, "Terms")).await;
    assert!(clicked.url.ends_with("/second"), "{}", clicked.text);
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn frames_come_for_page_changing_actions_only_and_the_thirteenth_pushes_out_the_first() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let mut watcher = tool
        .clone()
        .watch_frames(WatchFramesRequest {
            thread: "fr".into(),
        })
        .await
        .unwrap()
        .into_inner();

    let first = navigate(&mut tool, "fr", format!("http://{site}/page"))
        .await
        .frame
        .unwrap();
    let extracted = extract(&mut tool, "fr").await;
    assert!(extracted.frame.is_none(), "extract changes no page");
    let state = tool
        .act(act("fr", Action::State(StateAction {})))
        .await
        .unwrap()
        .into_inner();
    assert!(state.frame.is_none(), "state changes no page");
    let mut ids = vec![first.id.clone()];
    for i in 0..12 {
        let dy = if i % 2 == 0 { 300.0 } else { -300.0 };
        let reply = tool
            .act(act("fr", Action::Scroll(ScrollAction { dy })))
            .await
            .unwrap()
            .into_inner();
        ids.push(reply.frame.expect("scroll makes a frame").id);
    }
    for (i, id) in ids.iter().enumerate() {
        let frame = tokio::time::timeout(Duration::from_secs(10), watcher.message())
            .await
            .expect("the watcher gets every frame")
            .unwrap()
            .unwrap();
        assert_eq!(&frame.id, id, "frame {i} in order");
        assert!(frame.jpeg.starts_with(&[0xFF, 0xD8]));
        assert_eq!(jpeg_size(&frame.jpeg), (frame.width, frame.height));
    }
    let gone = tool
        .get_frame(GetFrameRequest {
            thread: "fr".into(),
            frame_id: first.id.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
    let second = tool
        .get_frame(GetFrameRequest {
            thread: "fr".into(),
            frame_id: ids[1].clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second.thread, "fr");
    let latest = tool
        .get_frame(GetFrameRequest {
            thread: "fr".into(),
            frame_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(&latest.id, ids.last().unwrap());
    fleet.stop().await;
}

/// A click's frame shows what the click did, whether the page drew it at once, in its next
/// animation frame or after a request it made (the picture is asked for beside the listing
/// only when the settle found the page quiet at its first look, with no request since the
/// click). Each a few times: the frame and the page's drawing race.
#[tokio::test(flavor = "multi_thread")]
async fn a_clicks_frame_shows_what_it_painted_at_once_in_the_next_frame_or_after_a_request() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let painted = [
        ("Green now", [0, 160, 0]),
        ("Red next frame", [200, 0, 0]),
        ("Blue after a request", [0, 0, 200]),
    ];
    for (button, colour) in painted {
        for round in 0..4 {
            let page = navigate(
                &mut tool,
                "paint",
                format!("http://{site}/fixtures/paint.html"),
            )
            .await;
            let reply = click(&mut tool, "paint", element(&page, button)).await;
            let frame = tool
                .get_frame(GetFrameRequest {
                    thread: "paint".into(),
                    frame_id: reply.frame.expect("a click makes a frame").id,
                })
                .await
                .unwrap()
                .into_inner();
            // Below the buttons: the page's background.
            let seen = pixel(&frame.jpeg, 640, 600);
            let near = seen
                .iter()
                .zip(colour)
                .all(|(&a, b)| (a as i32 - b).abs() <= 24);
            assert!(
                near,
                "{button}, round {round}: the frame shows {seen:?}, not {colour:?}"
            );
        }
    }
    fleet.stop().await;
}

/// The RGB of the pixel at (x, y) of a JPEG.
fn pixel(jpeg: &[u8], x: usize, y: usize) -> [u8; 3] {
    let mut decoder = jpeg_decoder::Decoder::new(jpeg);
    let pixels = decoder.decode().expect("a JPEG");
    let width = decoder.info().expect("its header").width as usize;
    let at = (y * width + x) * 3;
    [pixels[at], pixels[at + 1], pixels[at + 2]]
}

#[tokio::test(flavor = "multi_thread")]
async fn type_into_an_element_that_takes_no_text_names_the_fields_that_do() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(&mut tool, "t", format!("http://{site}/page")).await;
    let press = element(&page, "Press");
    let field = page.elements.iter().find(|e| e.kind == "input").unwrap();
    let error = tool
        .act(act(
            "t",
            Action::Type(TypeAction {
                n: press,
                text: "Ada".into(),
            }),
        ))
        .await
        .unwrap_err();
    assert_eq!(error.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        error.message(),
        format!(
            "element {press} is a button ('Press'), which takes no text; these of the last \
             listing do: [{}] input '{}'",
            field.n, field.label
        )
    );
    // Nothing was pressed, and the numbers still hold.
    assert!(extract(&mut tool, "t").await.text.contains("idle"));
    type_into(&mut tool, "t", field.n.into(), "Ada").await;
    fleet.stop().await;
}

/// Text a field does not keep (letters in a number field, a date in another form, what a tags
/// input makes items of) is not reported as typed into it alone: the reply says the field is
/// still empty, and what it takes.
#[tokio::test(flavor = "multi_thread")]
async fn typing_what_a_field_does_not_keep_says_it_is_still_empty_and_what_it_takes() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "t",
        format!("http://{site}/fixtures/formats.html"),
    )
    .await;
    // (field, text, how the reply begins, the field's state after, where it keeps the text)
    let typings = [
        (
            "Quantity",
            "twelve",
            "Typed 6 characters into 'Quantity', but it is still empty: an input:number takes \
             only a number (digits, a sign, a decimal point).\n",
            None,
        ),
        (
            "Quantity",
            "12",
            "Typed 2 characters into 'Quantity'.\n",
            Some("= \"12\""),
        ),
        (
            "Delivery date",
            "next friday",
            "Typed 11 characters into 'Delivery date', but it is still empty: an input:date \
             takes a date written as 2026-12-31.\n",
            None,
        ),
        (
            "Delivery date",
            "2027-01-15",
            "Typed 10 characters into 'Delivery date'.\n",
            Some("= \"2027-01-15\""),
        ),
        (
            "Tags",
            "red, green,",
            "Typed 11 characters into 'Tags', but it is still empty: the page refused the text \
             or took it away",
            None,
        ),
    ];
    for (label, text, head, state) in typings {
        let reply = type_into(&mut tool, "t", element(&page, label), text).await;
        assert!(reply.text.starts_with(head), "{}", reply.text);
        if let Some(state) = state {
            let n = element(&reply, label);
            let field = reply.elements.iter().find(|e| i64::from(e.n) == n).unwrap();
            assert_eq!(field.state, state, "{label}");
        }
    }
    assert!(extract(&mut tool, "t").await.text.contains("green"));
    fleet.stop().await;
}

/// A popup the page opens (as Django's admin does for a related object: `window.open` with a
/// name and a size) is the thread's page until it closes; the page that opened it waits behind
/// it as it was left, and gets what the popup hands it. `back` from the popup's first page
/// closes it, as a person would.
#[tokio::test(flavor = "multi_thread")]
async fn a_popup_is_the_threads_page_until_it_closes_and_its_opener_is_kept_as_it_was() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let state = |reply: &ActReply, label: &str| {
        let n = element(reply, label);
        let found = reply.elements.iter().find(|e| i64::from(e.n) == n);
        found.unwrap().state.clone()
    };
    let book = navigate(
        &mut tool,
        "p",
        format!("http://{site}/fixtures/windows.html"),
    )
    .await;
    type_into(&mut tool, "p", element(&book, "Title"), "Dune").await;

    for (leave_by, author) in [
        ("back", ""),
        ("Save author", "Frank Herbert"),
        // Hands an author over and closes itself 300 ms later, as a sign-in window does.
        ("Continue as Ursula K. Le Guin", "Ursula K. Le Guin"),
    ] {
        let popup = click(&mut tool, "p", element(&book, "Add another author")).await;
        assert!(
            popup.url.ends_with("windows.html?popup=1"),
            "{}",
            popup.text
        );
        assert!(
            popup.text.starts_with(&format!(
                "Clicked 'Add another author' → now at {} (Add author) It is a window the page opened (a popup)",
                popup.url
            )),
            "{}",
            popup.text
        );
        let back = if leave_by == "back" {
            acted(&mut tool, act("p", Action::Back(BackAction {}))).await
        } else {
            if leave_by == "Save author" {
                type_into(&mut tool, "p", element(&popup, "Name"), author).await;
            }
            let saved = click(&mut tool, "p", element(&popup, leave_by)).await;
            assert!(
                saved.text.contains(
                    "(Add book) The window closed: the thread is back on the page that opened it"
                ),
                "{}",
                saved.text
            );
            assert_eq!(state(&saved, "Author"), format!("= \"{author}\""));
            saved
        };
        assert!(
            back.url.ends_with("/fixtures/windows.html"),
            "{}",
            back.text
        );
        assert_eq!(state(&back, "Title"), "= \"Dune\"", "{}", back.text);
    }
    // A popup that closes itself at once leaves the thread where it was, without a wait.
    let started = std::time::Instant::now();
    let flashed = click(&mut tool, "p", element(&book, "Flash")).await;
    assert_eq!(flashed.title, "Add book", "{}", flashed.text);
    assert_eq!(state(&flashed, "Title"), "= \"Dune\"", "{}", flashed.text);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The thread's last picture is of the opener, as its listing.
    let frame = tool
        .get_frame(GetFrameRequest {
            thread: "p".into(),
            frame_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(frame.title, "Add book");
    // A popup whose own popup closes it: no page of the thread can reach that one any more,
    // so it closes too, and the thread is back on the book's form. (Whether the click's own
    // reply already tells it depends on how soon Chromium closes the window behind: a settle
    // that found the nested page quiet first answers there.)
    let popup = click(&mut tool, "p", element(&book, "Add another author")).await;
    let nested = click(&mut tool, "p", element(&popup, "Nested")).await;
    assert_eq!(nested.title, "Nested", "{}", nested.text);
    click(&mut tool, "p", element(&nested, "Close the window behind")).await;
    let open_pages = async || {
        let mut pages = Vec::new();
        for worker in &fleet.workers {
            for port_file in files_named(&worker.profiles, "DevToolsActivePort") {
                let port = std::fs::read_to_string(port_file).unwrap();
                let port = port.lines().next().unwrap().to_string();
                let list = reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                let list: serde_json::Value = serde_json::from_str(&list).unwrap();
                let targets = list.as_array().unwrap().iter();
                pages.extend(
                    targets
                        .filter(|t| t["type"] == "page")
                        .map(|t| t["url"].clone()),
                );
            }
        }
        pages
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while open_pages().await.len() > 1 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pages = open_pages().await;
    assert_eq!(pages.len(), 1, "{pages:?}");
    let form = extract(&mut tool, "p").await;
    assert!(form.text.starts_with("Add book — "), "{}", form.text);
    fleet.stop().await;
}

/// The files named `name` under `dir`, at any depth.
fn files_named(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_named(&path, name));
        } else if entry.file_name() == name {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listing_made_stale_by_a_navigation_gives_a_clear_error() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(&mut tool, "s", format!("http://{site}/page")).await;
    let press = element(&page, "Press");
    // The page goes elsewhere on its own, behind the controller's back.
    let worker = fleet
        .workers
        .iter()
        .find(|w| page.backend == format!("worker:{}", w.name))
        .expect("the thread's worker");
    let session = Some(Session::new("local", "default", "s"));
    worker
        .backend
        .navigate(NavigateRequest {
            session,
            url: format!("http://{site}/second"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    let stale = tool
        .act(act(
            "s",
            Action::Click(ClickAction {
                n: press,
                ..Default::default()
            }),
        ))
        .await
        .unwrap_err();
    assert_eq!(stale.code(), tonic::Code::FailedPrecondition);
    assert!(
        stale.message().contains("look again"),
        "{}",
        stale.message()
    );
    for n in [0, -1, 99] {
        let error = tool
            .act(act(
                "s",
                Action::Click(ClickAction {
                    n,
                    ..Default::default()
                }),
            ))
            .await
            .unwrap_err();
        assert_eq!(
            error.code(),
            tonic::Code::InvalidArgument,
            "{n}: {}",
            error.message()
        );
    }
    // The same address loaded again behind its back (as a restart brings a page back): said
    // so, since what was typed into it is gone too.
    let page = navigate(&mut tool, "s", format!("http://{site}/page")).await;
    let press = element(&page, "Press");
    worker
        .backend
        .navigate(NavigateRequest {
            session: Some(Session::new("local", "default", "s")),
            url: format!("http://{site}/page"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    let reloaded = tool
        .act(act(
            "s",
            Action::Click(ClickAction {
                n: press,
                ..Default::default()
            }),
        ))
        .await
        .unwrap_err();
    assert!(
        reloaded
            .message()
            .starts_with("the page was loaded again at its address since the last listing"),
        "{}",
        reloaded.message()
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn workspaces_are_placed_on_different_workers_and_return_to_theirs_after_a_restart() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let one = tool
        .act(act_in(
            "a",
            "ws-one",
            Action::Navigate(NavigateAction {
                url: format!("http://{site}/page"),
            }),
        ))
        .await
        .unwrap()
        .into_inner();
    let two = tool
        .act(act_in(
            "b",
            "ws-two",
            Action::Navigate(NavigateAction {
                url: format!("http://{site}/page"),
            }),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(one.backend, two.backend, "two workspaces, two workers");

    let Fleet {
        controller,
        workers,
        dir,
    } = fleet;
    let address = controller.address;
    controller.stop().await;
    let controller = ControllerProcess::start(
        controller_config(&dir.path().join("controller")),
        &address.to_string(),
    )
    .await;
    controller.wait_for_workers(&["w1", "w2"]).await;
    let mut tool = controller.tool().await;
    // ws-two first: a fresh choice would now pick the first worker by name.
    let again_two = tool
        .act(act("b", Action::Screenshot(ScreenshotAction {})))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again_two.backend, two.backend);
    let again_one = tool
        .act(act("a", Action::Screenshot(ScreenshotAction {})))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again_one.backend, one.backend);
    assert!(
        again_one.url.ends_with("/page"),
        "the page is still there: {}",
        again_one.url
    );
    Fleet {
        controller,
        workers,
        dir,
    }
    .stop()
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn when_every_worker_is_full_an_action_gets_the_deadline_error() {
    let site = serve_site().await;
    let fleet = Fleet::start_with(1, |config| config.controller.queue_deadline_ms = 500).await;
    let mut tool = fleet.controller.tool().await;
    // Place each workspace first, then hold both workers' only slot with a page that never loads.
    for (thread, workspace) in [("x", "ws-x"), ("y", "ws-y")] {
        tool.act(act_in(
            thread,
            workspace,
            Action::Navigate(NavigateAction {
                url: format!("http://{site}/second"),
            }),
        ))
        .await
        .unwrap();
    }
    let mut holders = Vec::new();
    for thread in ["x", "y"] {
        let mut tool = tool.clone();
        let url = format!("http://{site}/never");
        holders.push(tokio::spawn(async move {
            tool.act(act(thread, Action::Navigate(NavigateAction { url })))
                .await
        }));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while fleet
        .controller
        .workers()
        .await
        .iter()
        .map(|w| w.busy)
        .sum::<u32>()
        < 2
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the holders never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused = tool
        .act(act_in(
            "z",
            "ws-x",
            Action::Navigate(NavigateAction {
                url: format!("http://{site}/second"),
            }),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::ResourceExhausted,
        "{}",
        refused.message()
    );
    assert!(refused.message().contains("busy"), "{}", refused.message());
    for holder in holders {
        let outcome = holder.await.unwrap();
        assert_eq!(outcome.unwrap_err().code(), tonic::Code::DeadlineExceeded);
    }
    fleet.stop().await;
}

/// A navigation to a site that cannot be reached (a name that does not resolve, a port where
/// nothing listens, a server that hangs up, a port browsers refuse) or that gives nothing to
/// show (an empty error page, a redirect loop) fails saying why in words, as a browser without
/// the egress proxy would, instead of answering with the proxy's own page as the site's; the
/// page after it works as before.
#[tokio::test(flavor = "multi_thread")]
async fn a_navigation_to_a_site_that_cannot_be_reached_fails_saying_why() {
    let site = serve_site().await;
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let hangs_up = hangs_up_on_every_request().await;
    for (url, says) in [
        (
            "http://no-such-host.invalid/".to_string(),
            "no-such-host.invalid could not be resolved",
        ),
        (
            format!("http://127.0.0.1:{closed}/"),
            "could not connect to 127.0.0.1",
        ),
        (
            format!("http://{hangs_up}/"),
            "closed the connection without an answer",
        ),
        (
            "http://127.0.0.1:6000/".to_string(),
            "net::ERR_UNSAFE_PORT (browsers refuse to load any page from this port",
        ),
        (
            format!("http://{site}/empty-404"),
            "(the server answered 404 Not Found with an empty page: nothing to show)",
        ),
        (
            format!("http://{site}/redirect-loop"),
            "net::ERR_TOO_MANY_REDIRECTS (the site redirects in a loop",
        ),
    ] {
        let failed = tool
            .act(act(
                "u",
                Action::Navigate(NavigateAction { url: url.clone() }),
            ))
            .await
            .unwrap_err();
        assert_eq!(
            failed.code(),
            tonic::Code::FailedPrecondition,
            "{url}: {}",
            failed.message()
        );
        assert!(
            failed
                .message()
                .starts_with(&format!("navigation to {url} failed: "))
                && failed.message().contains(says),
            "{url}: {}",
            failed.message()
        );
    }
    let page = navigate(&mut tool, "u", format!("http://{site}/page")).await;
    assert!(page.text.contains("Press"), "{}", page.text);
    fleet.stop().await;
}

/// A server on 127.0.0.1 that reads each request and closes the connection without answering.
async fn hangs_up_on_every_request() -> std::net::SocketAddr {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
        }
    });
    address
}

/// A site whose certificate no authority vouches for (as a network that impersonates it would
/// present) is not loaded, nor fetched: each fails saying so, and nothing of the impostor's
/// page reaches the agent. The same server answers a client told to take any certificate.
#[tokio::test(flavor = "multi_thread")]
async fn a_site_whose_certificate_the_browser_does_not_trust_is_not_loaded() {
    let impostor = serve_self_signed("<title>Impostor</title><p>Type your password here</p>").await;
    let answered = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap()
        .get(format!("https://{impostor}/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(answered.contains("Impostor"), "{answered}");
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    let url = format!("https://{impostor}/");
    let failed = tool
        .act(act(
            "tls",
            Action::Navigate(NavigateAction { url: url.clone() }),
        ))
        .await
        .unwrap_err();
    assert_eq!(failed.code(), tonic::Code::FailedPrecondition);
    assert!(
        failed
            .message()
            .starts_with(&format!("navigation to {url} failed: net::ERR_CERT_"))
            && failed.message().contains("not one the browser trusts")
            && !failed.message().contains("Impostor"),
        "{}",
        failed.message()
    );
    // Nor does a fetch with the browser's cookies send anything to it.
    let refused = tool
        .act(act(
            "tls",
            Action::Fetch(FetchAction {
                url: url.clone(),
                ..Default::default()
            }),
        ))
        .await
        .unwrap_err();
    assert!(
        refused
            .message()
            .contains("not one the browser trusts: nothing was sent")
            && !refused.message().contains("Impostor"),
        "{}",
        refused.message()
    );
    fleet.stop().await;
}

/// A rich text editor that keeps its own model (Draft.js's kind) takes typed text as its own,
/// through its paste: the text stays after its next drawing, and replaces what it held. It is
/// named by the label of the hidden field that keeps its value; a field's error is read from
/// its box, not its help text.
#[tokio::test(flavor = "multi_thread")]
async fn a_rich_text_editor_takes_typed_text_as_its_own_and_is_named_by_its_label() {
    let site = serve_site().await;
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "r",
        format!("http://{site}/fixtures/richtext.html"),
    )
    .await;
    assert!(
        page.text
            .contains("\"Slug\" = \"hello\" (invalid: The slug is already in use.)"),
        "{}",
        page.text
    );
    let body = element(&page, "Body");
    for (text, model) in [
        ("First line\nsecond line", "Model: First line / second line"),
        ("Replaced", "Model: Replaced\n"),
    ] {
        type_into(&mut tool, "r", body, text).await;
        let read = extract(&mut tool, "r").await;
        assert!(read.text.contains(model), "{text:?}: {}", read.text);
    }
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_says_where_the_focus_went() {
    let site = serve_site().await;
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(&mut tool, "f", format!("http://{site}/login")).await;
    let user = element(&page, "user");
    type_into(&mut tool, "f", user, "ana").await;
    let key = |key: &str| act("f", Action::Key(KeyAction { key: key.into() }));
    let tabbed = acted(&mut tool, key("Tab")).await;
    let password = element(&tabbed, "password");
    assert!(
        tabbed.text.starts_with(&format!(
            "Pressed Tab. The focus is on [{password}] input:password \"password\" (empty).\n"
        )),
        "{}",
        tabbed.text
    );
    let tabbed = acted(&mut tool, key("Tab")).await;
    assert!(
        tabbed
            .text
            .starts_with("Pressed Tab. The focus is on [3] button \"Sign in\".\n"),
        "{}",
        tabbed.text
    );
    // Past the last control, the focus leaves the page's controls.
    let past = acted(&mut tool, key("Tab")).await;
    assert!(
        past.text
            .starts_with("Pressed Tab. Nothing on the page has the focus.\n"),
        "{}",
        past.text
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_double_click_opens_what_a_click_only_selects_on_a_phone_and_a_desktop() {
    let site = serve_site().await;
    let fleet = Fleet::start(1).await;
    let mut tool = fleet.controller.tool().await;
    for kind in [
        profile_action::Kind::Mobile(true),
        profile_action::Kind::Desktop(true),
    ] {
        let thread = if matches!(kind, profile_action::Kind::Mobile(_)) {
            "d-mobile"
        } else {
            "d-desktop"
        };
        acted(
            &mut tool,
            act(
                thread,
                Action::Profile(ProfileAction {
                    kind: Some(kind.clone()),
                }),
            ),
        )
        .await;
        let files = navigate(
            &mut tool,
            thread,
            format!("http://{site}/fixtures/files.html"),
        )
        .await;
        click(&mut tool, thread, element(&files, "notes.txt")).await;
        assert!(
            extract(&mut tool, thread)
                .await
                .text
                .contains("Nothing open."),
            "{thread}: a click selects only"
        );
        let opened = acted(
            &mut tool,
            act(
                thread,
                Action::Click(ClickAction {
                    n: element(&files, "report.pdf"),
                    double_click: true,
                }),
            ),
        )
        .await;
        assert!(
            opened.text.starts_with("Double-clicked 'report.pdf'."),
            "{thread}: {}",
            opened.text
        );
        let read = extract(&mut tool, thread).await;
        assert!(
            read.text.contains("Opened report.pdf."),
            "{thread}: {}",
            read.text
        );
        // On a todo's tick, the double-click is for the todo its label names: edited, not
        // ticked twice.
        let edited = acted(
            &mut tool,
            act(
                thread,
                Action::Click(ClickAction {
                    n: element(&files, "Buy milk"),
                    double_click: true,
                }),
            ),
        )
        .await;
        assert!(
            edited.text.contains("checkbox \"Buy milk\" (unchecked)"),
            "{thread}: {}",
            edited.text
        );
        let read = extract(&mut tool, thread).await;
        assert!(
            read.text.contains("Editing Buy milk."),
            "{thread}: {}",
            read.text
        );
    }
    fleet.stop().await;
}

/// A box that scrolls apart from a page that cannot (a dashboard's sidebar) is scrolled where
/// the wheel over the middle of the view would move nothing: what the listing counts below is
/// reached, and its end is said as the page's is.
#[tokio::test(flavor = "multi_thread")]
async fn scroll_reaches_what_a_sidebar_that_scrolls_apart_holds_below() {
    let site = serve_site().await;
    let fleet = Fleet::start(4).await;
    let mut tool = fleet.controller.tool().await;
    let page = navigate(
        &mut tool,
        "sb",
        format!("http://{site}/fixtures/sidebar.html"),
    )
    .await;
    assert!(page.text.contains("more below"), "{}", page.text);
    let lists = |reply: &ActReply, label: &str| reply.elements.iter().any(|e| e.label == label);
    assert!(!lists(&page, "Option 30"), "{}", page.text);
    let mut scroll = async |dy: f64| {
        tool.act(act("sb", Action::Scroll(ScrollAction { dy })))
            .await
            .unwrap()
            .into_inner()
    };
    let down = scroll(600.0).await;
    assert!(
        down.text.starts_with("Scrolled down 600 px.\n"),
        "{}",
        down.text
    );
    assert!(lists(&down, "Option 30"), "{}", down.text);
    let end = scroll(5000.0).await;
    assert!(
        end.text
            .starts_with("Scrolled down 900 px of the 5000 asked: the page's bottom."),
        "{}",
        end.text
    );
    assert!(lists(&end, "Option 60"), "{}", end.text);
    let none = scroll(100.0).await;
    assert!(
        none.text.starts_with(
            "Nothing scrolled: the page is at its bottom already, and so is every box in view \
             that scrolls apart from it."
        ),
        "{}",
        none.text
    );
    let up = scroll(-300.0).await;
    assert!(up.text.starts_with("Scrolled up 300 px.\n"), "{}", up.text);
    fleet.stop().await;
}
