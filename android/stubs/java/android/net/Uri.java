package android.net;

public abstract class Uri {
    public static native Uri parse(String uriString);
    public abstract String getScheme();
    public abstract String getHost();
}
