package android.os;

public class Environment {
    public static String DIRECTORY_DOWNLOADS = "Download";
}
