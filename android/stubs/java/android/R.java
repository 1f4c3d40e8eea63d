package android;

public final class R {
    public static final class drawable {
        public static final int ic_dialog_info = 0x01080041;
        public static final int stat_sys_upload_done = 0x010800b0;
    }
}
