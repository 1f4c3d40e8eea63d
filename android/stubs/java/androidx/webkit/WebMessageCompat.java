package androidx.webkit;

public class WebMessageCompat {
    public native String getData();
}
