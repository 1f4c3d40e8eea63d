package androidx.webkit;

public class WebViewCompat {
    public interface WebMessageListener {
        void onPostMessage(android.webkit.WebView view, WebMessageCompat message, android.net.Uri sourceOrigin, boolean isMainFrame, JavaScriptReplyProxy replyProxy);
    }
    public static native ScriptHandler addDocumentStartJavaScript(android.webkit.WebView webview, String script, java.util.Set<String> allowedOriginRules);
    public static native void addWebMessageListener(android.webkit.WebView webView, String jsObjectName, java.util.Set<String> allowedOriginRules, WebMessageListener listener);
}
