package android.webkit;

public class JsResult {
    public final native void confirm();
    public final native void cancel();
}
