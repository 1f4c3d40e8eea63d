package android.webkit;

public class WebView extends android.widget.FrameLayout {
    public WebView(android.content.Context context) { super(context); }
    public native WebSettings getSettings();
    public native void setWebViewClient(WebViewClient client);
    public native WebViewClient getWebViewClient();
    public native void setWebChromeClient(WebChromeClient client);
    public native WebChromeClient getWebChromeClient();
    public native void setDownloadListener(DownloadListener listener);
    public native void loadUrl(String url);
    public native void evaluateJavascript(String script, ValueCallback<String> resultCallback);
    public native String getUrl();
    public native String getTitle();
    public native int getProgress();
    public native boolean canGoBack();
    public native void goBack();
    public native void stopLoading();
    public native void destroy();

    public class WebViewTransport {
        public synchronized native void setWebView(WebView webview);
        public synchronized native WebView getWebView();
    }
}
