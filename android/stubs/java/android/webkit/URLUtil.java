package android.webkit;

public final class URLUtil {
    public static final native String guessFileName(String url, String contentDisposition, String mimeType);
}
