package android.webkit;

public class WebResourceResponse {
    public native int getStatusCode();
}
