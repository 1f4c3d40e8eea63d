package nanomuse.android.browser

import android.app.Presentation
import android.content.Context
import android.graphics.Bitmap
import android.graphics.Canvas
import android.graphics.ColorMatrix
import android.graphics.ColorMatrixColorFilter
import android.graphics.Paint
import android.graphics.PixelFormat
import android.hardware.display.DisplayManager
import android.hardware.display.VirtualDisplay
import android.media.Image
import android.media.ImageReader
import android.os.Bundle
import android.os.Handler
import android.os.HandlerThread
import android.view.View
import android.view.ViewGroup
import android.view.WindowManager
import android.webkit.WebView
import android.widget.FrameLayout

/**
 * Where the WebView lives while nobody looks at it. Sizes are physical px; the WebView is
 * sized [widthPx] × [heightPx] so its CSS viewport is that divided by the density.
 * [attach] and [detach] run on the main thread; [frame] on any thread.
 */
interface OffscreenScreen {
    val widthPx: Int
    val heightPx: Int

    /** Puts [view] on this screen (it is in no parent now). */
    fun attach(view: WebView)

    /** Takes [view] off this screen (it may be moved elsewhere in the same main-thread turn). */
    fun detach(view: WebView)

    /**
     * The latest picture of the screen in physical px, a bitmap the caller owns; waits up to
     * [waitMs] for a first frame; null when there is none.
     */
    fun frame(waitMs: Long): Bitmap?

    /** Frees the display and its buffers (main thread). */
    fun release()
}

/**
 * The screen the WebView must think it is on (the spec's "How the phone's browser works"): a
 * private virtual display rendering into an [ImageReader] nobody sees, and a [Presentation]
 * window on it holding the WebView. Chromium composes frames into the surface at full speed
 * whether or not the app is on screen; the latest one is kept as a bitmap, since frames arrive
 * only when the content changes.
 *
 * Facts this follows (shared/notes/android.md): flags PRESENTATION without PUBLIC need no
 * permission; the display gets the phone's own densityDpi (a view moved between displays keeps
 * its density); the window type is set to TYPE_PRIVATE_PRESENTATION explicitly, with
 * FLAG_NOT_FOCUSABLE; acquireLatestImage() may return null or throw when maxImages are held,
 * and every Image is closed; rowStride may exceed width·4. A Presentation cancels itself when
 * its display's size or density changes, so a new size means a new screen (see DeviceBrowser).
 *
 * The constructor throws when the device refuses the display or the window; the caller then
 * falls back to [DrawnScreen].
 */
class VirtualScreen(
    context: Context,
    override val widthPx: Int,
    override val heightPx: Int,
    densityDpi: Int,
) : OffscreenScreen {
    private val frames = HandlerThread("nanomuse-frames").apply { start() }
    private val reader = ImageReader.newInstance(widthPx, heightPx, PixelFormat.RGBA_8888, 2)
    private val display: VirtualDisplay
    private val presentation: Presentation
    private val container = FrameLayout(context)

    @Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN") // for wait/notifyAll
    private val lock = Object()
    /** The frame as it came (rowStride/4 wide), reused between frames. */
    private var wide: Bitmap? = null
    private var framesSeen = 0L
    /** Some drivers hand BGRA in an RGBA reader. */
    @Volatile private var swapRedBlue = false
    private var formatChecked = false

    init {
        val displays = context.getSystemService(DisplayManager::class.java)
        try {
            display = displays.createVirtualDisplay(
                "nanomuse-browser", widthPx, heightPx, densityDpi, reader.surface,
                DisplayManager.VIRTUAL_DISPLAY_FLAG_PRESENTATION,
            ) ?: throw IllegalStateException("the device refused a virtual display")
        } catch (e: RuntimeException) {
            reader.close()
            frames.quitSafely()
            throw e
        }
        reader.setOnImageAvailableListener({ r -> takeFrame(r) }, Handler(frames.looper))
        presentation = object : Presentation(context, display.display) {
            override fun onCreate(savedInstanceState: Bundle?) {
                super.onCreate(savedInstanceState)
                setContentView(container)
            }
        }
        presentation.window?.apply {
            setType(WindowManager.LayoutParams.TYPE_PRIVATE_PRESENTATION)
            addFlags(WindowManager.LayoutParams.FLAG_NOT_FOCUSABLE)
        }
        presentation.setCancelable(false)
        try {
            presentation.show() // WindowManager.InvalidDisplayException when refused
        } catch (e: RuntimeException) {
            display.release()
            reader.close()
            frames.quitSafely()
            throw e
        }
    }

    override fun attach(view: WebView) {
        container.addView(view, FrameLayout.LayoutParams(widthPx, heightPx))
    }

    override fun detach(view: WebView) {
        container.removeView(view)
    }

    private fun takeFrame(reader: ImageReader) {
        val image: Image = try {
            reader.acquireLatestImage()
        } catch (e: IllegalStateException) {
            null // maxImages held: the next callback gets it
        } ?: return
        try {
            val plane = image.planes[0]
            val pixelStride = plane.pixelStride
            val rowWidth = plane.rowStride / pixelStride
            synchronized(lock) {
                val bitmap = wide?.takeIf { it.width == rowWidth && it.height == image.height }
                    ?: Bitmap.createBitmap(rowWidth, image.height, Bitmap.Config.ARGB_8888).also {
                        wide?.recycle()
                        wide = it
                    }
                plane.buffer.rewind()
                bitmap.copyPixelsFromBuffer(plane.buffer)
                framesSeen++
                lock.notifyAll()
            }
            if (!formatChecked) {
                // HAL_PIXEL_FORMAT_BGRA_8888 is 5; an RGBA reader's buffers normally say 1.
                val format = if (android.os.Build.VERSION.SDK_INT >= 28) {
                    image.hardwareBuffer?.use { it.format } ?: image.format
                } else {
                    image.format
                }
                swapRedBlue = format == 5
                formatChecked = true
            }
        } catch (e: RuntimeException) {
            // A frame lost is not worth a crash; the next one comes with the next change.
        } finally {
            image.close()
        }
    }

    override fun frame(waitMs: Long): Bitmap? = synchronized(lock) {
        val deadline = System.currentTimeMillis() + waitMs
        while (framesSeen == 0L) {
            val left = deadline - System.currentTimeMillis()
            if (left <= 0) return null
            lock.wait(left)
        }
        val source = wide ?: return null
        // Crop the row padding off (and swap channels for a BGRA driver).
        val out = Bitmap.createBitmap(widthPx, heightPx, Bitmap.Config.ARGB_8888)
        val paint = if (swapRedBlue) Paint().apply { colorFilter = ColorMatrixColorFilter(SWAP_RED_BLUE) } else null
        Canvas(out).drawBitmap(source, 0f, 0f, paint)
        out
    }

    override fun release() {
        container.removeAllViews()
        try {
            presentation.dismiss()
        } catch (e: RuntimeException) {
        }
        display.release()
        reader.close()
        frames.quitSafely()
        synchronized(lock) {
            wide?.recycle()
            wide = null
        }
    }

    companion object {
        private val SWAP_RED_BLUE = ColorMatrix(
            floatArrayOf(
                0f, 0f, 1f, 0f, 0f,
                0f, 1f, 0f, 0f, 0f,
                1f, 0f, 0f, 0f, 0f,
                0f, 0f, 0f, 1f, 0f,
            ),
        )
    }
}

/**
 * The fallback when a device refuses the virtual display (notes: "a never-attached WebView
 * measure(EXACTLY), layout(0, 0, w, h), draw(Canvas(bitmap)) with LAYER_TYPE_SOFTWARE"). No
 * window, so no vsync: animation frames do not run, timers are throttled, and video and WebGL
 * may be blank. A frame is drawn on the main thread when asked for.
 */
class DrawnScreen(override val widthPx: Int, override val heightPx: Int) : OffscreenScreen {
    private var view: WebView? = null
    private val main = Handler(android.os.Looper.getMainLooper())

    override fun attach(view: WebView) {
        this.view = view
        view.setLayerType(View.LAYER_TYPE_SOFTWARE, null)
        view.layoutParams = ViewGroup.LayoutParams(widthPx, heightPx)
        layout(view)
    }

    private fun layout(view: WebView) {
        view.measure(
            View.MeasureSpec.makeMeasureSpec(widthPx, View.MeasureSpec.EXACTLY),
            View.MeasureSpec.makeMeasureSpec(heightPx, View.MeasureSpec.EXACTLY),
        )
        view.layout(0, 0, widthPx, heightPx)
    }

    override fun detach(view: WebView) {
        view.setLayerType(View.LAYER_TYPE_NONE, null)
        if (this.view === view) this.view = null
    }

    override fun frame(waitMs: Long): Bitmap? {
        val drawn = java.util.concurrent.CompletableFuture<Bitmap?>()
        main.post {
            val view = view
            if (view == null) {
                drawn.complete(null)
            } else {
                try {
                    layout(view)
                    val bitmap = Bitmap.createBitmap(widthPx, heightPx, Bitmap.Config.ARGB_8888)
                    view.draw(Canvas(bitmap))
                    drawn.complete(bitmap)
                } catch (e: RuntimeException) {
                    drawn.completeExceptionally(e)
                }
            }
        }
        return try {
            drawn.get(maxOf(waitMs, 2_000), java.util.concurrent.TimeUnit.MILLISECONDS)
        } catch (e: java.util.concurrent.TimeoutException) {
            null
        }
    }

    override fun release() {
        view = null
    }
}
