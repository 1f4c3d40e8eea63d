package androidx.webkit;

public class WebViewFeature {
    public static final String WEB_MESSAGE_LISTENER = "WEB_MESSAGE_LISTENER";
    public static native boolean isFeatureSupported(String feature);
}
