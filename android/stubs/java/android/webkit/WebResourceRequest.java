package android.webkit;

public interface WebResourceRequest {
    android.net.Uri getUrl();
    boolean isForMainFrame();
}
