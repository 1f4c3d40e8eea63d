package android.webkit;

public class WebViewClient {
    public boolean shouldOverrideUrlLoading(WebView view, WebResourceRequest request) { return false; }
    public WebResourceResponse shouldInterceptRequest(WebView view, WebResourceRequest request) { return null; }
    public void onPageStarted(WebView view, String url, android.graphics.Bitmap favicon) {}
    public void onPageFinished(WebView view, String url) {}
    public void onReceivedHttpError(WebView view, WebResourceRequest request, WebResourceResponse errorResponse) {}
    public void onReceivedError(WebView view, WebResourceRequest request, WebResourceError error) {}
    public void doUpdateVisitedHistory(WebView view, String url, boolean isReload) {}
    public boolean onRenderProcessGone(WebView view, RenderProcessGoneDetail detail) { return false; }
}
