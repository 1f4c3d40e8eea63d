package android.webkit;

public class JsPromptResult extends JsResult {
    public final native void confirm(String result);
}
