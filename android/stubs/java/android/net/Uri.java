package android.net;

public abstract class Uri {
    public static native Uri parse(String uriString);
    public static native Uri fromFile(java.io.File file);
    public abstract String getScheme();
    public abstract String getHost();
}
