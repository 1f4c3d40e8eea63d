package android.view;

public final class Display {

}
