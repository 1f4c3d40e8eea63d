package android.webkit;

public class WebChromeClient {
    public boolean onJsAlert(WebView view, String url, String message, JsResult result) { return false; }
    public boolean onJsConfirm(WebView view, String url, String message, JsResult result) { return false; }
    public boolean onJsPrompt(WebView view, String url, String message, String defaultValue, JsPromptResult result) { return false; }
    public boolean onJsBeforeUnload(WebView view, String url, String message, JsResult result) { return false; }
    public void onPermissionRequest(PermissionRequest request) {}
    public void onGeolocationPermissionsShowPrompt(String origin, GeolocationPermissions.Callback callback) {}
    public boolean onCreateWindow(WebView view, boolean isDialog, boolean isUserGesture, android.os.Message resultMsg) { return false; }
    public void onCloseWindow(WebView window) {}
    public boolean onShowFileChooser(WebView webView, ValueCallback<android.net.Uri[]> filePathCallback, FileChooserParams fileChooserParams) { return false; }

    public abstract static class FileChooserParams {
        public static final int MODE_OPEN = 0;
        public static final int MODE_OPEN_MULTIPLE = 1;
        public abstract int getMode();
        public abstract String[] getAcceptTypes();
    }
}
