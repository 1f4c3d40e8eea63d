@file:Suppress("unused")

package okio

open class ByteString private constructor()
