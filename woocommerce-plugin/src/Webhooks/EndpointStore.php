<?php
/**
 * The webhook endpoint the plugin registered, per environment, with its signing secret sealed.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Webhooks;

use ServicePay\WooCommerce\Security\SecretBox;

defined( 'ABSPATH' ) || exit;

/**
 * Option `servicepay_webhook_endpoints` (not autoloaded, outside the gateway's settings so the settings form
 * never holds it): `{ test: { id, url, secret: <sealed> }, live: {…} }`.
 */
final class EndpointStore {

	public const OPTION = 'servicepay_webhook_endpoints';

	/** The box sealing secrets with the site's salts. */
	private static function box(): SecretBox {
		return new SecretBox( wp_salt( 'auth' ) );
	}

	/**
	 * The stored endpoint of an environment.
	 *
	 * @param string $environment `test` or `live`.
	 * @return array{id:string,url:string,secret:string}|null The secret is sealed.
	 */
	public static function get( string $environment ): ?array {
		$all = get_option( self::OPTION, array() );
		$one = is_array( $all ) ? ( $all[ $environment ] ?? null ) : null;
		return is_array( $one ) && isset( $one['id'], $one['url'] ) ? array(
			'id'     => (string) $one['id'],
			'url'    => (string) $one['url'],
			'secret' => (string) ( $one['secret'] ?? '' ),
		) : null;
	}

	/**
	 * Stores an endpoint; a null secret keeps the one stored.
	 *
	 * @param string      $environment `test` or `live`.
	 * @param string      $id          `we_…`.
	 * @param string      $url         The URL the service calls.
	 * @param string|null $secret      `whsec_…` in the clear (sealed here), or null.
	 */
	public static function put( string $environment, string $id, string $url, ?string $secret ): void {
		$all = get_option( self::OPTION, array() );
		$all = is_array( $all ) ? $all : array();
		$old = self::get( $environment );
		$all[ $environment ] = array(
			'id'     => $id,
			'url'    => $url,
			'secret' => null !== $secret ? self::box()->seal( $secret ) : ( $old['secret'] ?? '' ),
		);
		update_option( self::OPTION, $all, false );
	}

	/**
	 * Whether the stored secret of an environment can be read with the current salts.
	 *
	 * @param string $environment `test` or `live`.
	 */
	public static function has_readable_secret( string $environment ): bool {
		$one = self::get( $environment );
		return null !== $one && null !== self::box()->open( $one['secret'] );
	}

	/**
	 * Every readable signing secret, by environment.
	 *
	 * @return array<string,string>
	 */
	public static function secrets(): array {
		$secrets = array();
		foreach ( array( 'test', 'live' ) as $environment ) {
			$one    = self::get( $environment );
			$secret = null === $one ? null : self::box()->open( $one['secret'] );
			if ( null !== $secret ) {
				$secrets[ $environment ] = $secret;
			}
		}
		return $secrets;
	}
}
