package android.webkit;

public abstract class CookieManager {
    public static native CookieManager getInstance();
    public abstract void setAcceptCookie(boolean accept);
    public abstract void setAcceptThirdPartyCookies(WebView webview, boolean accept);
    public abstract String getCookie(String url);
    public abstract void setCookie(String url, String value);
    public abstract void flush();
}
