package android.webkit;

public abstract class WebSettings {
    public static final int MIXED_CONTENT_COMPATIBILITY_MODE = 2;
    public static native String getDefaultUserAgent(android.content.Context context);
    public abstract void setJavaScriptEnabled(boolean flag);
    public abstract boolean getJavaScriptEnabled();
    public abstract void setDomStorageEnabled(boolean flag);
    public abstract boolean getDomStorageEnabled();
    public abstract void setSupportMultipleWindows(boolean support);
    public abstract void setJavaScriptCanOpenWindowsAutomatically(boolean flag);
    public abstract boolean getJavaScriptCanOpenWindowsAutomatically();
    public abstract void setUseWideViewPort(boolean use);
    public abstract boolean getUseWideViewPort();
    public abstract void setLoadWithOverviewMode(boolean overview);
    public abstract boolean getLoadWithOverviewMode();
    public abstract void setBuiltInZoomControls(boolean enabled);
    public abstract boolean getBuiltInZoomControls();
    public abstract void setDisplayZoomControls(boolean enabled);
    public abstract boolean getDisplayZoomControls();
    public abstract void setMixedContentMode(int mode);
    public abstract int getMixedContentMode();
    public abstract void setUserAgentString(String ua);
    public abstract String getUserAgentString();
}
