package android.app;

public class Presentation extends Dialog {
    public Presentation(android.content.Context outerContext, android.view.Display display) { super(outerContext); }
}
