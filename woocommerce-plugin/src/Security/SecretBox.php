<?php
/**
 * Encrypts the webhook signing secret before it is stored as an option.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Security;

defined( 'ABSPATH' ) || defined( 'SERVICEPAY_TESTING' ) || exit;

/**
 * XSalsa20-Poly1305 (libsodium's secretbox, built into PHP) under a key derived from the site's salts
 * (`wp_salt( 'auth' )`, i.e. AUTH_KEY and AUTH_SALT in wp-config.php). A database dump alone therefore does
 * not reveal the secret; changing the salts makes it unreadable, and the settings page asks for a re-save.
 */
final class SecretBox {

	/**
	 * The 32-byte key.
	 *
	 * @var string
	 */
	private string $key;

	/**
	 * Builds a box from key material (any length; it is hashed to a key).
	 *
	 * @param string $key_material Site secret, e.g. `wp_salt( 'auth' )`.
	 */
	public function __construct( string $key_material ) {
		if ( '' === $key_material ) {
			throw new \InvalidArgumentException( 'SecretBox needs key material.' );
		}
		$this->key = hash_hmac( 'sha256', 'servicepay-woocommerce/webhook-secret/v1', $key_material, true );
	}

	/**
	 * Encrypts; the result is `v1:` + base64(nonce || ciphertext).
	 *
	 * @param string $plaintext Secret.
	 */
	public function seal( string $plaintext ): string {
		$nonce = random_bytes( SODIUM_CRYPTO_SECRETBOX_NONCEBYTES );
		return 'v1:' . base64_encode( $nonce . sodium_crypto_secretbox( $plaintext, $nonce, $this->key ) ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode
	}

	/**
	 * Decrypts; null when the value was not sealed with this key (salts changed) or was altered.
	 *
	 * @param string $sealed Output of seal().
	 */
	public function open( string $sealed ): ?string {
		if ( 0 !== strncmp( $sealed, 'v1:', 3 ) ) {
			return null;
		}
		$bytes = base64_decode( substr( $sealed, 3 ), true ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_decode
		if ( false === $bytes || strlen( $bytes ) <= SODIUM_CRYPTO_SECRETBOX_NONCEBYTES ) {
			return null;
		}
		$plain = sodium_crypto_secretbox_open(
			substr( $bytes, SODIUM_CRYPTO_SECRETBOX_NONCEBYTES ),
			substr( $bytes, 0, SODIUM_CRYPTO_SECRETBOX_NONCEBYTES ),
			$this->key
		);
		return false === $plain ? null : $plain;
	}
}
